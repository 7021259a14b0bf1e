import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { lpStream } from '@libp2p/utils'
import type { Connection, PrivateKey, Stream } from '@libp2p/interface'
import { multiaddr } from '@multiformats/multiaddr'
import type { Logger } from 'pino'
import {
  decodeGroupJoinRequest, encodeGroupJoinMessage, groupSecretMatches, joinAsMember, signFinalGroup,
  GROUP_JOIN_PROTOCOL, MAX_GROUP_JOIN_BYTES, type FinalGroupBody, type GroupInvite, type GroupJoinReply
} from '../../core/beacon/group-join.js'
import type { Signer } from '../../core/identity.js'
import { nativeVerifyDocument } from '../../crypto/native-crypto.js'
import type { Signed } from '../../core/signed.js'
import { createNode } from '../../net/node.js'
import { createRejectionLog } from '../../net/rejection-log.js'
import { writeAtomic } from '../local-beacon.js'
import { roundAt, type ChainInfo } from '../../core/beacon/index.js'

// The adapters of a group set up by invites (src/core/beacon/group-join.ts): the creator's desk,
// which binds each slot to the first peer proving its secret and signs the final group once all are
// bound, the creator's node while the group gathers, and the member's side over libp2p.

/** The creator's group being set up, until every member has joined (DIR/group-draft.json). */
export const GROUP_DRAFT_FILE = 'group-draft.json'
/** How long a member has to send its request once its stream is open. */
const REQUEST_MS = 10_000
/** How long the creator's node waits, once every member has joined, for the final group to reach them. */
const DRAIN_MS = 5_000
const MAX_JOIN_STREAMS = 2 * 64

export interface GroupDraftSlot {
  /** SHA-256 of the slot's one-time secret (secretDigest): the secret itself is not kept. */
  digest: string
  peer?: string
  addrs?: string[]
  url?: string
}

export interface GroupDraft {
  v: 1
  id: string
  threshold: number
  period: number
  phaseMs: number
  /** The DKG starts this long after the last member joined: time for everyone to start their node. */
  startInMs: number
  creator: { peer: string, addrs: string[], url?: string }
  /** The creator's own listen addresses and HTTP API (its group block's `listen` and `http`). */
  listen: string[]
  http: { host: string, port: number }
  /** Slot (member index 2…n) → its secret's digest and, once joined, its member. */
  slots: Record<string, GroupDraftSlot>
  /**
   * A reshare (`beacon group reshare`): the group it starts from, as FinalGroupBody.reshare without
   * the transition, which is set when the group is complete (a few rounds after the reshare's end).
   */
  reshare?: Omit<NonNullable<FinalGroupBody['reshare']>, 'transition'>
  /** A reshare's: the creator's node config before it (`beacon group reshare --cancel` writes it back). */
  previous?: Record<string, unknown>
  final?: Signed<FinalGroupBody>
}

export async function readGroupDraft (dir: string): Promise<GroupDraft | undefined> {
  try { return JSON.parse(await readFile(join(dir, GROUP_DRAFT_FILE), 'utf8')) as GroupDraft } catch { return undefined }
}

/** A member's `group` config block from the final group and its own listen and HTTP settings. */
export function groupBlockOf (final: FinalGroupBody, listen: string[], http: { host: string, port: number }): Record<string, unknown> {
  return { ...final, listen, http }
}

/** The first round the new group signs: two rounds after the reshare's last phase can end. */
export function reshareTransition (chain: ChainInfo, start: number, phaseMs: number): number {
  return roundAt(chain, Math.max(start + 3 * phaseMs, chain.genesis_time * 1000)) + 2
}

/**
 * The creator's desk: binds each slot to the first peer that proves its secret, keeping the binding
 * in the draft before answering; once every slot is bound it signs the final group (the DKG
 * `startInMs` from then) and hands it to every stream still waiting. Everything else is refused with
 * one sentence (logged in rate-limited summaries), and changes nothing.
 */
export class GroupJoinDesk {
  readonly #refused: ReturnType<typeof createRejectionLog>
  readonly #waiting = new Set<(doc: Signed<FinalGroupBody>) => void>()
  readonly #serving = new Set<Promise<void>>()
  #write: Promise<void> = Promise.resolve()
  #resolve: (doc: Signed<FinalGroupBody>) => void = () => {}
  readonly complete: Promise<Signed<FinalGroupBody>>

  constructor (readonly dir: string, readonly draft: GroupDraft, readonly signer: Signer, readonly logger: Logger, readonly now: () => number = Date.now) {
    this.#refused = createRejectionLog(logger)
    this.complete = new Promise(resolve => { this.#resolve = resolve })
    if (draft.final !== undefined) this.#resolve(draft.final)
  }

  /** The member indices still awaited. */
  open (): number[] {
    return Object.entries(this.draft.slots).filter(([, s]) => s.peer === undefined).map(([k]) => Number(k)).sort((a, b) => a - b)
  }

  async request (peer: string, req: ReturnType<typeof decodeGroupJoinRequest>): Promise<GroupJoinReply> {
    const d = this.draft
    const refuse = (reason: string): GroupJoinReply => {
      this.#refused({ peer, slot: req.slot, reason }, 'group join refused')
      return { kind: 'refused', reason }
    }
    if (req.id !== d.id) return refuse(`this node gathers beacon group ${d.id}, not ${req.id}: the invite is for another group`)
    const slot = d.slots[String(req.slot)]
    if (slot === undefined || !groupSecretMatches(req.secret, slot.digest)) {
      return refuse(`this invite is not valid for member ${req.slot} of group ${d.id}: it was altered, or replaced by a later 'beacon group new'; ask for a new one`)
    }
    if (peer === d.creator.peer) return refuse('the creator is member 1 already')
    if (slot.peer !== undefined && slot.peer !== peer) return refuse(`this invite was used already: member ${req.slot} of group ${d.id} is ${slot.peer}; ask for a new one`)
    const elsewhere = Object.entries(d.slots).find(([k, s]) => s.peer === peer && k !== String(req.slot))
    if (elsewhere !== undefined) return refuse(`this node (${peer}) is member ${elsewhere[0]} of group ${d.id} already`)
    if (slot.peer === undefined && d.final === undefined) {
      slot.peer = peer
      slot.addrs = req.addrs
      if (req.url !== undefined) slot.url = req.url
      const open = this.open()
      if (open.length === 0) d.final = signFinalGroup(this.#finalBody(), this.signer)
      await this.#save()
      this.logger.info({ group: d.id, member: req.slot, peer, waiting: open }, `member ${req.slot} of beacon group ${d.id} joined: ${peer}${open.length > 0 ? `; waiting for member ${open.join(', ')}` : '; every member has joined'}`)
      if (d.final !== undefined) {
        for (const w of this.#waiting) w(d.final)
        this.#resolve(d.final)
      }
    }
    return { kind: 'bound', slot: req.slot, waiting: this.open() }
  }

  #finalBody (): FinalGroupBody {
    const d = this.draft
    const start = this.now() + d.startInMs
    const slots = Object.keys(d.slots).map(Number).sort((a, b) => a - b).map(k => d.slots[String(k)])
    return {
      id: d.id,
      members: [
        { peer: d.creator.peer, addrs: d.creator.addrs, ...(d.creator.url !== undefined ? { url: d.creator.url } : {}) },
        ...slots.map(s => ({ peer: s.peer as string, addrs: s.addrs as string[], ...(s.url !== undefined ? { url: s.url } : {}) }))
      ],
      threshold: d.threshold,
      period: d.period,
      ...(d.reshare === undefined
        ? {
            // Round 1 one phase after the DKG begins: on its fast path it is done by then; a slower DKG's
            // missed rounds are made afterwards (docs/beacon-group.md, "Rounds").
            genesisTime: Math.ceil((start + d.phaseMs) / 1000),
            dkg: { start, phaseMs: d.phaseMs }
          }
        : {
            // A reshare keeps the chain; the new group signs from two rounds after the reshare's last deadline.
            genesisTime: d.reshare.chain.genesis_time as number,
            dkg: { start, phaseMs: d.phaseMs },
            reshare: { ...d.reshare, transition: reshareTransition(d.reshare.chain as unknown as ChainInfo, start, d.phaseMs) }
          })
    }
  }

  async serve (stream: Stream, connection: Connection): Promise<void> {
    const done = this.#serve(stream, connection.remotePeer.toString())
    this.#serving.add(done)
    try { await done } finally { this.#serving.delete(done) }
  }

  /** Waits (at most `ms`) for the streams being served to finish. */
  async drain (ms: number): Promise<void> {
    await Promise.race([Promise.allSettled([...this.#serving]), new Promise(resolve => setTimeout(resolve, ms).unref())])
  }

  async #serve (stream: Stream, peer: string): Promise<void> {
    const lp = lpStream(stream, { maxDataLength: MAX_GROUP_JOIN_BYTES })
    const write = async (reply: GroupJoinReply): Promise<void> => { await lp.write(encodeGroupJoinMessage(reply)) }
    try {
      let req
      try {
        req = decodeGroupJoinRequest((await lp.read({ signal: AbortSignal.timeout(REQUEST_MS) })).subarray())
      } catch (err) {
        this.#refused({ peer, reason: (err as Error).message }, 'group join refused')
        await write({ kind: 'refused', reason: `bad group join request: ${(err as Error).message}`.slice(0, 500) })
        await stream.close()
        return
      }
      const reply = await this.request(peer, req)
      await write(reply)
      if (reply.kind !== 'bound') { await stream.close(); return }
      const final = this.draft.final ?? await new Promise<Signed<FinalGroupBody> | undefined>(resolve => {
        const w = (doc: Signed<FinalGroupBody>): void => { this.#waiting.delete(w); resolve(doc) }
        this.#waiting.add(w)
        // The member hung up before the group was complete: it asks again when it comes back.
        stream.addEventListener('close', () => { this.#waiting.delete(w); resolve(undefined) }, { once: true })
      })
      if (final === undefined) return
      await write({ kind: 'group', doc: final as Extract<GroupJoinReply, { kind: 'group' }>['doc'] })
      await stream.close()
    } catch (err) {
      this.logger.debug({ peer, err: (err as Error).message }, 'group join stream failed')
      stream.abort(err as Error)
    }
  }

  async #save (): Promise<void> {
    const d = this.draft
    this.#write = this.#write.then(async () => {
      await writeAtomic(join(this.dir, GROUP_DRAFT_FILE), JSON.stringify(d, null, 2) + '\n', 0o600)
    })
    await this.#write
  }
}

/**
 * The creator's node while its group gathers (`fairdeal node` on a config `{"groupDraft": …}`): a
 * libp2p node on the draft's listen addresses serving only the group join protocol (anyone may
 * connect: a joining member's peer id is not known yet). Resolves with the final group once every
 * member has joined (kept in the draft), or undefined when `signal` stops it first.
 */
export async function gatherMembers (options: { dir: string, draft: GroupDraft, privateKey: PrivateKey, signer: Signer, logger: Logger, signal: AbortSignal }): Promise<Signed<FinalGroupBody> | undefined> {
  const { draft, logger } = options
  const desk = new GroupJoinDesk(options.dir, draft, options.signer, logger)
  if (draft.final !== undefined) return draft.final
  const node = await createNode({ privateKey: options.privateKey, listen: draft.listen, members: 'anyone', logger })
  try {
    await node.handle(GROUP_JOIN_PROTOCOL, async (stream: Stream, connection: Connection) => { await desk.serve(stream, connection) }, { maxInboundStreams: MAX_JOIN_STREAMS })
    logger.info({ group: draft.id, waiting: desk.open(), addresses: node.getMultiaddrs().map(String) }, `beacon group ${draft.id} is gathering: waiting for member ${desk.open().join(', ')} to join with their invites`)
    const stopped = new Promise<undefined>(resolve => {
      if (options.signal.aborted) resolve(undefined)
      options.signal.addEventListener('abort', () => { resolve(undefined) }, { once: true })
    })
    const final = await Promise.race([desk.complete, stopped])
    if (final !== undefined) await desk.drain(DRAIN_MS)
    return final
  } finally {
    try { await node.stop() } catch {}
  }
}

/**
 * A member's side: dials the creator at the invite's addresses (a node of its own that listens
 * nowhere), proves the invite's secret with its addresses and URL, and waits for the final group,
 * checked. `onBound` hears which members are still awaited.
 */
export async function joinGroup (options: { invite: GroupInvite, privateKey: PrivateKey, self: string, addrs: string[], url?: string, logger: Logger, onBound?: (waiting: number[]) => void, onWaiting?: () => void, waitMs?: number }): Promise<Signed<FinalGroupBody>> {
  const { invite } = options
  const node = await createNode({ privateKey: options.privateKey, listen: [], members: new Set([invite.creator]), logger: options.logger })
  // The creator may not have started its node yet: its addresses are tried again, once a second,
  // for `waitMs` (default two minutes), said once.
  const until = Date.now() + (options.waitMs ?? 120_000)
  let said = false
  try {
    let last: unknown
    for (;;) {
      for (const address of invite.addresses) {
        let stream: Stream
        try {
          stream = await node.dialProtocol(multiaddr(address.includes('/p2p/') ? address : `${address}/p2p/${invite.creator}`), GROUP_JOIN_PROTOCOL, { signal: AbortSignal.timeout(15_000) })
        } catch (err) { last = err; continue }
        try {
          return await joinAsMember(lpStream(stream, { maxDataLength: MAX_GROUP_JOIN_BYTES }), invite, options.self, options.addrs, options.url, options.onBound, nativeVerifyDocument)
        } finally {
          stream.abort(new Error('join done'))
        }
      }
      if (Date.now() + 1_000 > until) break
      if (!said) { options.onWaiting?.(); said = true }
      await new Promise(resolve => setTimeout(resolve, 1_000))
    }
    throw new Error(`the group's creator does not answer at ${invite.addresses.join(', ')} (${String((last as Error)?.message ?? last).split('\n')[0]}): is its node running ('fairdeal node --config DIR/node.json' where it ran 'beacon group new')?`)
  } finally {
    try { await node.stop() } catch {}
  }
}
