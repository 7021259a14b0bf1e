import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { UsageError } from '../errors.js'
import { logDbPath } from '../../store/log.js'
import { LogInUseError } from '../../store/errors.js'
import { repairStore } from '../../store/repair.js'

const USAGE = `usage: fairdeal repair --data DIR [--yes]

Checks the store of a stopped node and says what is wrong with it and what a repair would do.
With --yes, does it: nothing is changed without it.

A node refuses to start on a damaged store: LevelDB files truncated, corrupted or missing, or a log
with fewer entries than the store's head file (DIR/db-head.json, rewritten after every append)
says it had. A repair, with --yes:
  1. copies the store aside first (DIR/db.before-repair-TIME, with the head file);
  2. lets LevelDB rebuild its CURRENT and MANIFEST from the files left, if it cannot open them;
  3. keeps the log's longest run of entries from seq 0 that are the node's own and link; entries
     after a break are taken out and written to DIR/repair-TIME-set-aside.jsonl;
  4. re-signs the head at the last entry kept, in LevelDB and the head file;
  5. puts back a dealer's hand counter that LevelDB lost (it never goes back).
Entries that were lost stay lost: peers that witnessed the longer log will report this node's log
as rolled back. If you have a backup of the whole data directory, restoring it is better.

Exit 0 when the store is whole (or was repaired), 1 when it needs a repair (without --yes),
2 when it could not be read.`

const OPTIONS = { data: { type: 'string' }, yes: { type: 'boolean' } } satisfies OptionSpecs

export const command = defineCommand({
  name: 'repair',
  summary: 'check a stopped node\'s store and repair it (--yes)',
  help: USAGE,
  options: OPTIONS,
  run
})

async function run ({ values, positionals }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  if (values.data === undefined) throw new UsageError('--data DIR is required (see --help)')
  const dir = values.data
  const { loadOrCreateIdentity, IDENTITY_FILE } = await import('../../net/identity.js')
  const { nativeSigner } = await import('../../crypto/native-crypto.js')
  // The head is re-signed with the node's key; a directory without one is not a node's.
  try { await access(join(dir, IDENTITY_FILE)) } catch { throw new UsageError(`no ${IDENTITY_FILE} in ${dir}: is it a fairdeal data directory?`) }
  const identity = await loadOrCreateIdentity(dir)
  const apply = values.yes === true
  let report
  try {
    report = await repairStore(logDbPath(dir), nativeSigner(identity.seed, identity.peerId), { apply })
  } catch (err) {
    if (err instanceof LogInUseError) throw new UsageError(`${dir} is in use by a running node: stop it first`)
    throw err
  }
  if (report.problems.length === 0) {
    process.stdout.write(`the store in ${dir} is whole (log ${report.kept === 0 ? 'empty' : `seq 0..${report.kept - 1}`}): nothing to repair\n`)
    return 0
  }
  for (const p of report.problems) process.stdout.write(`problem: ${p}\n`)
  for (const a of report.actions) process.stdout.write(`${apply ? 'done' : 'would'}: ${a}\n`)
  if (!apply) {
    process.stdout.write(`run 'fairdeal repair --data ${dir} --yes' to do it\n`)
    return 1
  }
  if (report.backup !== undefined) process.stdout.write(`the damaged store was copied to ${report.backup}\n`)
  if (report.setAside !== undefined) process.stdout.write(`entries taken out are in ${report.setAside}\n`)
  process.stdout.write(`repaired: the log holds seq ${report.kept === 0 ? 'nothing' : `0..${report.kept - 1}`}\n`)
  return 0
}
