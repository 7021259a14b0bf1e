// Timelock (docs/protocol.md §16): what time-locking adds to a hand, and what finishing a hand from
// its timelocks costs once R is out, each printed beside tlock-js's own bare encrypt and decrypt
// measured in the same run (the bound: fairdeal cannot seal or open faster than the IBE underneath,
// and a hand seals once per party and, recovered, opens once per party).
//
// - added per hand: whole hands played by the dealer and seat machines in memory (real wire
//   encoding, signatures, a local beacon's entries), time-locked against not, same machine; the
//   difference is the sealing on the path (one by the dealer, one per seat) plus the checks.
// - recovery: one seat finishing a stopped dealer's hand from R's entry (open the secret and every
//   nonce, recompute, check its cards, sign the RECOVERED record), cold (a fresh hand each time).
import { randomBytes } from 'node:crypto'
import { localBeaconSecretKey, localChainInfo, parseChainInfo, signLocalRound } from '../../src/core/beacon/index.js'
import { timelockDecryptWithTlockJs, timelockEncryptText } from '../../src/beacon/tlock.js'
import { openTimelockText, sealTimelockText } from '../../src/core/timelock/index.js'
import { signRecovered } from '../../src/protocol/recover.js'
import { signerFromSeed } from '../../src/core/identity.js'
import { memoryHands } from './lib/memory-hands.js'

const key = localBeaconSecretKey(new Uint8Array(48).fill(3))
const genesis = Math.floor(Date.now() / 1000) - 3600
const chain = parseChainInfo(localChainInfo({ secretKey: key, period: 3, genesisTime: genesis }))
const entry = (round: number): ReturnType<typeof signLocalRound> => signLocalRound(key, round)
const random = (n: number): Uint8Array => new Uint8Array(randomBytes(n))

function median (xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}
const fmt = (x: number): string => x.toFixed(1)

async function timeAsync (n: number, f: (i: number) => Promise<unknown>): Promise<number> {
  const out: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await f(i)
    out.push(performance.now() - t)
  }
  return median(out)
}

export async function run (): Promise<void> {
  const N = 15
  const round = 100
  const value = 'ab'.repeat(32)
  // Warm-ups (noble's precomputed tables, tlock-js's module) before anything is timed.
  await timelockDecryptWithTlockJs(await timelockEncryptText(value, chain, round), chain, entry(round))
  openTimelockText(sealTimelockText(value, chain, round, random), chain, entry(round))

  const cts: string[] = []
  const tlockEncrypt = await timeAsync(N, async () => { cts.push(await timelockEncryptText(value, chain, round)) })
  const tlockDecrypt = await timeAsync(N, async (i) => await timelockDecryptWithTlockJs(cts[i], chain, entry(round)))
  const sealed: string[] = []
  const coreSeal = await timeAsync(N, async () => { sealed.push(sealTimelockText(value, chain, round, random)) })
  const coreOpen = await timeAsync(N, async (i) => openTimelockText(sealed[i], chain, entry(round)))
  console.log(`tlock-js bare: encrypt ${fmt(tlockEncrypt)} ms, decrypt ${fmt(tlockDecrypt)} ms (median of ${N}; decrypt with an offline client, entry in hand)`)
  console.log(`fairdeal core: seal ${fmt(coreSeal)} ms (${fmt(coreSeal / tlockEncrypt)}× tlock-js encrypt), open ${fmt(coreOpen)} ms (${fmt(coreOpen / tlockDecrypt)}× tlock-js decrypt)`)

  // Whole hands in memory, 4 human seats, time-locked or not, interleaved.
  const now = (genesis + 1800) * 1000
  const plain = memoryHands({ scheme: 'atout-drand-v1', beacon: { chain, marginMs: 0 }, now })
  const locked = memoryHands({ scheme: 'atout-drand-v1', beacon: { chain, marginMs: 0 }, now, timelock: { rule: 'replay' } })
  plain.play(entry)
  locked.play(entry)
  const tPlain: number[] = []
  const tLocked: number[] = []
  let lastLocked
  for (let i = 0; i < N; i++) {
    let t = performance.now(); plain.play(entry); tPlain.push(performance.now() - t)
    t = performance.now(); lastLocked = locked.play(entry); tLocked.push(performance.now() - t)
  }
  const added = median(tLocked) - median(tPlain)
  const humans = locked.table.seats.length
  console.log(`hand, 4 seats, in memory: ${fmt(median(tPlain))} ms without timelock, ${fmt(median(tLocked))} ms time-locked: +${fmt(added)} ms per hand`)
  console.log(`  bound: ${1 + humans} tlock-js encrypts in a row = ${fmt((1 + humans) * tlockEncrypt)} ms (${fmt(added / ((1 + humans) * tlockEncrypt))}×); ` +
    `on real nodes the seats seal in parallel, so the critical path gains about 2 seals (dealer, then a seat) = ${fmt(2 * coreSeal)} ms`)

  // Recovery: a seat finishing a hand from R's entry, a fresh hand each time (nothing cached).
  const seatSigner = signerFromSeed(randomBytes(32))
  const recoveries: number[] = []
  for (let i = 0; i < N; i++) {
    const receipt = locked.play(entry)
    const e = receipt.reveal.body.beacon as NonNullable<typeof receipt.reveal.body.beacon>
    const t = performance.now()
    signRecovered(receipt.commit, receipt.pledges, e, [], 'replay', 'bench', seatSigner)
    recoveries.push(performance.now() - t)
  }
  const recovery = median(recoveries)
  console.log(`recovery once R is out (open the secret and ${humans} nonces, recompute, sign): ${fmt(recovery)} ms; ` +
    `bound: ${1 + humans} tlock-js decrypts = ${fmt((1 + humans) * tlockDecrypt)} ms (${fmt(recovery / ((1 + humans) * tlockDecrypt))}×)`)
  void lastLocked
}
