import type { Signer } from '../identity.js'
import type { Signed } from '../signed.js'
import { DkgMachine, type DkgEffect, type DkgOutcome, type DkgResult } from './dkg.js'
import type { RefusalBody } from './reshare.js'
import type { DocumentVerifier } from './dkg-documents.js'
import type { GroupParams } from './group-params.js'

/** One message on the in-memory network: from and to are peer ids; `doc` goes through a JSON round trip. */
export interface DkgEnvelope { from: string, to: string, doc: unknown }

export interface InMemoryDkg {
  machines: Array<DkgMachine | undefined>
  results: Array<DkgResult | undefined>
  effects: DkgEffect[][]
  failures: Array<string | undefined>
  /** Reshare: the outcome seen by each old member that left the group. */
  left: Array<DkgOutcome | undefined>
  /** Reshare refused: each node's signed refusal. */
  refusals: Array<Signed<RefusalBody> | undefined>
  /** Frames delivered (after `intercept`). */
  delivered: number
}

/**
 * Runs a whole DKG in memory (tests, the benchmark): every member's machine, their messages
 * delivered in order with a JSON round trip as over the wire, the clock moved to each phase
 * deadline only when messages stop. `intercept` may drop (undefined) or replace a message;
 * members in `down` neither start nor receive. In a reshare, `signers` are every node taking part
 * (old and new members) and `oldShare(i)` gives node i's old share when it deals.
 */
export function runDkgInMemory (params: GroupParams, signers: Signer[], opts: {
  random: (member: number) => (n: number) => Uint8Array
  intercept?: (m: DkgEnvelope) => DkgEnvelope | undefined
  down?: ReadonlySet<number>
  echo?: boolean
  verify?: DocumentVerifier
  oldShare?: (member: number) => string | undefined
}): InMemoryDkg {
  const down = opts.down ?? new Set<number>()
  const machines = signers.map((s, i) => down.has(i + 1)
    ? undefined
    : new DkgMachine({ params, signer: s, random: opts.random(i + 1), echo: opts.echo, verify: opts.verify, oldShare: opts.oldShare?.(i + 1) }))
  const effects: DkgEffect[][] = signers.map(() => [])
  const results: Array<DkgResult | undefined> = signers.map(() => undefined)
  const failures: Array<string | undefined> = signers.map(() => undefined)
  const left: Array<DkgOutcome | undefined> = signers.map(() => undefined)
  const refusals: Array<Signed<RefusalBody> | undefined> = signers.map(() => undefined)
  const queue: DkgEnvelope[] = []
  let delivered = 0
  let now = params.dkg.start
  const handle = (i: number, out: DkgEffect[]): void => {
    const from = signers[i].peerId
    for (const e of out) {
      effects[i].push(e)
      if (e.kind === 'send') queue.push({ from, to: e.to, doc: e.doc })
      if (e.kind === 'broadcast') for (const s of signers) if (s.peerId !== from) queue.push({ from, to: s.peerId, doc: e.doc })
      if (e.kind === 'done') results[i] = e.result
      if (e.kind === 'failed') failures[i] = e.reason
      if (e.kind === 'left') left[i] = e.outcome
      if (e.kind === 'refused') refusals[i] = e.record
    }
  }
  machines.forEach((m, i) => { if (m !== undefined) handle(i, m.start(now)) })
  const drain = (): void => {
    while (queue.length > 0) {
      let m: DkgEnvelope | undefined = queue.shift() as DkgEnvelope
      if (opts.intercept !== undefined) m = opts.intercept(m)
      if (m === undefined) continue
      const to = m.to
      const i = signers.findIndex(s => s.peerId === to)
      const machine = machines[i]
      if (machine === undefined) continue
      delivered++
      handle(i, machine.receive(m.from, JSON.parse(JSON.stringify(m.doc)), now))
    }
  }
  drain()
  for (let k = 1; k <= 3; k++) {
    if (results.every((r, i) => r !== undefined || machines[i] === undefined || failures[i] !== undefined || left[i] !== undefined)) break
    now = params.dkg.start + k * params.dkg.phaseMs
    machines.forEach((m, i) => { if (m !== undefined) handle(i, m.tick(now)) })
    drain()
  }
  return { machines, results, effects, failures, left, refusals, delivered }
}
