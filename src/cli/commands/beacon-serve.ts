import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { join } from 'node:path'
import { writeFile } from 'node:fs/promises'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'
import { beaconConfigJson, LOCAL_BEACON_TRUST } from '../../core/beacon/index.js'
import { startLocalBeacon, INFO_FILE } from '../../beacon/local-beacon.js'

const USAGE = `usage: fairdeal beacon serve --data DIR [--period SECONDS] [--port PORT]

Runs a local drand-compatible beacon on 127.0.0.1 (v1 HTTP API, quicknet's scheme, 404 for future
rounds) for offline tables. Its BLS key is kept in DIR; the same DIR always serves the same chain.
Trust: ${LOCAL_BEACON_TRUST}. Whoever holds DIR can compute every future round.

  --data DIR        where the key, chain-info.json and beacon-config.json live (created if missing)
  --period SECONDS  seconds between rounds for a new beacon (default 3)
  --port PORT       TCP port (default: any free port)

Runs until interrupted (Ctrl-C).`

const OPTIONS = {
  data: { type: 'string' },
  period: { type: 'string' },
  port: { type: 'string' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'beacon serve',
  summary: 'run a local drand-compatible beacon',
  help: USAGE,
  options: OPTIONS,
  run
})

async function run ({ values }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  if (values.data === undefined) throw new UsageError('--data DIR is required (the beacon key lives there)')
  const period = parseIntOption(values.period, '--period', 1, 3600)
  const port = parseIntOption(values.port, '--port', 0, 65535)

  const beacon = await startLocalBeacon({ dataDir: values.data, period, port })
  const configPath = join(values.data, 'beacon-config.json')
  await writeFile(configPath, JSON.stringify(beaconConfigJson(beacon.config), null, 2) + '\n')
  const { info } = beacon
  process.stdout.write([
    `local drand beacon (${LOCAL_BEACON_TRUST})`,
    `url:          ${beacon.url}`,
    `chain hash:   ${info.hash}`,
    `scheme:       ${info.schemeID}, a round every ${info.period} s since ${new Date(info.genesis_time * 1000).toISOString()}`,
    `public key:   ${info.public_key}`,
    `chain info:   ${join(values.data, INFO_FILE)}`,
    `table config: ${configPath}`,
    ''
  ].join('\n'))

  await new Promise<void>(resolve => {
    const stop = (): void => { process.off('SIGINT', stop); process.off('SIGTERM', stop); resolve() }
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
  await beacon.close()
  return 0
}
