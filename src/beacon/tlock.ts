import { Buffer } from 'node:buffer'
import { timelockDecrypt as tlockDecrypt, timelockEncrypt as tlockEncrypt } from 'tlock-js'
import type { ChainClient, ChainInfo as DrandChainInfo, RandomnessBeacon } from 'drand-client'
import type { BeaconEntry, ChainInfo } from '../core/beacon/index.js'
import { checkTimelockTarget, TimelockError, timelockSupported } from '../core/timelock/index.js'

/**
 * tlock-js behind fairdeal's conventions: an offline ChainClient built from the pinned chain info
 * (and, to decrypt, the round's entry), so encryption never touches the network; the armor
 * normalised to the one canonical form the documents carry; the `-> tlock` stanza checked after
 * every encryption (tlock-js never compares the chain hash); and tlock-js's console output on
 * decryption dropped.
 */

class OfflineChainClient implements ChainClient {
  readonly options = { disableBeaconVerification: false, noCache: true, chainVerificationParams: undefined }
  readonly #info: DrandChainInfo
  readonly #entries: Map<number, BeaconEntry>

  constructor (info: ChainInfo, entries: readonly BeaconEntry[]) {
    this.#info = info as unknown as DrandChainInfo
    this.#entries = new Map(entries.map(e => [e.round, e]))
    this.options = { ...this.options, chainVerificationParams: { chainHash: info.hash, publicKey: info.public_key } } as never
  }

  chain (): { baseUrl: string, info: () => Promise<DrandChainInfo> } {
    return { baseUrl: 'offline:', info: async () => this.#info }
  }

  async get (round: number): Promise<RandomnessBeacon> {
    const entry = this.#entries.get(round)
    if (entry === undefined) throw new Error(`round ${round} is not held by this offline client`)
    return { ...entry, round } as RandomnessBeacon
  }

  async latest (): Promise<RandomnessBeacon> {
    const rounds = [...this.#entries.keys()].sort((a, b) => b - a)
    if (rounds.length === 0) throw new Error('this offline client holds no round')
    return await this.get(rounds[0])
  }
}

/** The canonical armor: no leading or trailing blank space, LF line endings, one final LF. */
export function normaliseArmor (text: string): string {
  return text.replace(/\r\n?/g, '\n').trim() + '\n'
}

/** Encrypts `text` (UTF-8) to `round` of `chain` with tlock-js; returns the canonical armored ciphertext. */
export async function timelockEncryptText (text: string, chain: ChainInfo, round: number): Promise<string> {
  if (!timelockSupported(chain)) throw new TimelockError('unsupported', `scheme ${chain.schemeID} has no timelock encryption`)
  const armored = normaliseArmor(await tlockEncrypt(round, Buffer.from(text, 'utf8'), new OfflineChainClient(chain, [])))
  const problem = checkTimelockTarget(armored, { chainHash: chain.hash, round })
  if (problem !== undefined) throw new TimelockError('malformed', `tlock-js produced a ciphertext we cannot use: ${problem}`)
  return armored
}

let consoleFiltered = false
/** tlock-js prints `beacon received: …` on every decryption; keep the rest of console.log intact. */
function dropTlockConsoleOutput (): void {
  if (consoleFiltered) return
  consoleFiltered = true
  const original = console.log.bind(console)
  console.log = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('beacon received: ')) return
    original(...args)
  }
}

/**
 * Decrypts with tlock-js itself, offline, from the round's entry (tlock-js re-verifies the entry
 * against the pinned key). The daemon and the verifier use the core's `openTimelockText`; this one
 * is the reference it is cross-checked against (tests, benchmark). Note tlock-js refuses a round
 * whose time has not come on this machine's clock.
 */
export async function timelockDecryptWithTlockJs (armored: string, chain: ChainInfo, entry: BeaconEntry): Promise<Uint8Array> {
  dropTlockConsoleOutput()
  const problem = checkTimelockTarget(normaliseArmor(armored), { chainHash: chain.hash, round: entry.round })
  if (problem !== undefined) throw new TimelockError('malformed', problem)
  return new Uint8Array(await tlockDecrypt(normaliseArmor(armored), new OfflineChainClient(chain, [entry])))
}
