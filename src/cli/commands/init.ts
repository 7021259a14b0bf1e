import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { UsageError } from '../errors.js'
import { NetInputError } from '../../net/errors.js'
import { loadOrCreateIdentity } from '../../net/identity.js'
import { dialAddress, parseListenAddress } from '../../net/addresses.js'
import { DEFAULT_LISTEN } from '../../net/limits.js'

const HELP = `usage: fairdeal init --data DIR [--listen MULTIADDR]... [--json]

Creates the node's identity (DIR/identity.key, mode 0600) unless it exists, then prints the peer id
and the addresses the node will listen on, as others should dial them. Nothing else is stored: the
node listens on its config's "listen", so give here the addresses you will put there.

  --data DIR          the node's data directory (created with mode 0700 if missing)
  --listen MULTIADDR  an address the node will listen on, repeatable; only printed, with the peer id
                      (default: ${DEFAULT_LISTEN.join(' and ')})
  --json              print one JSON object instead of text`

const OPTIONS = {
  data: { type: 'string' },
  listen: { type: 'string', multiple: true },
  json: { type: 'boolean' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'init',
  summary: 'create a node identity (the only command that creates one)',
  help: HELP,
  options: OPTIONS,
  run
})

async function run ({ values }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  if (values.data === undefined || values.data === '') throw new UsageError('--data DIR is required')
  try {
    // Addresses first: a typo should not leave a fresh key behind.
    const listen = (values.listen ?? DEFAULT_LISTEN).map(a => parseListenAddress(a))
    const identity = await loadOrCreateIdentity(values.data)
    const addresses = listen.map(a => dialAddress(a, identity.peerId).toString())
    if (values.json === true) {
      process.stdout.write(JSON.stringify({
        peerId: identity.peerId, created: identity.created, keyFile: identity.path, listen: addresses
      }) + '\n')
      return 0
    }
    process.stdout.write([
      identity.created ? `created a new identity in ${identity.path}` : `identity already exists in ${identity.path}`,
      `peer id: ${identity.peerId}`,
      'listen addresses:',
      ...addresses.map(a => `  ${a}`),
      ...(addresses.some(a => /^\/ip[46]\/(0\.0\.0\.0|::)\//.test(a))
        ? ['(0.0.0.0 and :: mean every interface: others dial one of this machine\'s own addresses instead)']
        : [])
    ].join('\n') + '\n')
    return 0
  } catch (err) {
    if (err instanceof NetInputError) throw new UsageError(err.message)
    throw err
  }
}
