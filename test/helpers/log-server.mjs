// Nodes in their own process that serve their receipt logs over libp2p, for the remote-verify tests.
// Runs from the build: node test/helpers/log-server.mjs DIR ENTRIES [--anyone] [--member PEERID]
//   [--forge SEQ] [+ DIR ENTRIES [options] …]
// For each `+`-separated node: creates DIR's identity and ENTRIES log entries when the log is
// empty, then serves it on a loopback TCP port; prints the nodes' multiaddrs (with /p2p/) on one
// stdout line, space-separated. --forge SEQ serves the log with one byte of entry SEQ changed: a
// peer that lies. Several nodes share one process (one Node start-up instead of several).
await import('../../dist/src/polyfill.js')
const { parseArgs } = await import('node:util')
const { default: pino } = await import('pino')
const { loadOrCreateIdentity } = await import('../../dist/src/net/identity.js')
const { createNode } = await import('../../dist/src/net/node.js')
const { registerLogFetch } = await import('../../dist/src/net/log-fetch.js')
const { openLog, logDbPath } = await import('../../dist/src/store/log.js')
const { signerFromSeed } = await import('../../dist/src/core/identity.js')
const { signDocument } = await import('../../dist/src/core/signed.js')

const specs = []
for (const arg of process.argv.slice(2)) {
  if (arg === '+' || specs.length === 0) specs.push([])
  if (arg !== '+') specs.at(-1).push(arg)
}
const stops = []
const addrs = []
for (const args of specs) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { anyone: { type: 'boolean' }, member: { type: 'string', multiple: true }, forge: { type: 'string' } }
  })
  const [dir, count] = positionals
  const identity = await loadOrCreateIdentity(dir)
  const signer = signerFromSeed(identity.seed)
  const seat = signerFromSeed(new Uint8Array(32).fill(2))
  const log = await openLog(logDbPath(dir), signer)
  if (log.head() === null) {
    for (let i = 0; i < Number(count); i++) {
      await log.append(i % 5 === 4 ? 'abort' : 'receipt', signDocument('test-receipt', { hand: i, game: 'coinche', seats: [seat.peerId, 'robot', 'robot', 'robot'], beacon: null }, seat))
    }
  }
  const forge = values.forge === undefined ? null : Number(values.forge)
  const served = forge === null
    ? log
    : {
        headLine: () => log.headLine(),
        lines: async function * (range) {
          for await (const line of log.lines(range)) {
            yield JSON.parse(line).body.seq === forge ? line.replace('"game":"coinche"', '"game":"coinchf"') : line
          }
        }
      }
  const node = await createNode({ privateKey: identity.privateKey, listen: ['/ip4/127.0.0.1/tcp/0'], logger: pino({ level: 'silent' }) })
  await registerLogFetch(node, served, values.anyone === true ? { policy: 'anyone' } : { members: values.member ?? [] })
  addrs.push(node.getMultiaddrs()[0].toString())
  stops.push(async () => { await node.stop(); await log.close() })
}
process.stdout.write(`${addrs.join(' ')}\n`)
const stop = async () => { for (const s of stops) await s(); process.exit(0) }
process.on('SIGTERM', () => { void stop() })
