// Child process for the crash test: opens a log and appends in a loop, printing each seq once its
// append has returned (is synced). Runs from the build: `node test/helpers/log-appender.mjs DIR`.
// Each payload is a document signed by a second key, like a receipt is signed by its seats.
await import('../../dist/src/polyfill.js')
const { openLog } = await import('../../dist/src/store/log.js')
const { signerFromSeed } = await import('../../dist/src/core/identity.js')
const { signDocument } = await import('../../dist/src/core/signed.js')

const owner = signerFromSeed(new Uint8Array(32).fill(1))
const seat = signerFromSeed(new Uint8Array(32).fill(2))
const log = await openLog(process.argv[2], owner)
process.stdout.write(`open ${log.head()?.body.seq ?? -1}\n`)
for (;;) {
  const next = (log.head()?.body.seq ?? -1) + 1
  // Payloads of varying size, some large, so a kill can land in the middle of a big write.
  const filler = 'x'.repeat((next * 7919) % 20000)
  const payload = signDocument('test-receipt', { hand: next, game: 'coinche', seats: [seat.peerId, 'robot', 'robot', 'robot'], beacon: null, filler }, seat)
  const { entry } = await log.append(next % 5 === 4 ? 'abort' : 'receipt', payload)
  process.stdout.write(`${entry.body.seq}\n`)
}
