import { randomBytes } from 'node:crypto'
import type { Libp2p } from '@libp2p/interface'
import type { Logger } from 'pino'
import { ROBOT } from '../../src/core/hand/messages.js'
import { signerFromSeed } from '../../src/core/identity.js'
import type { Signed } from '../../src/core/signed.js'
import type { NodeConfig } from '../../src/daemon/config.js'
import { loadOrCreateIdentity } from '../../src/net/identity.js'
import { createNode } from '../../src/net/node.js'
import { createMessenger, type Messenger } from '../../src/net/messenger.js'
import { SeatMachine } from '../../src/protocol/seat.js'
import type { Effect, HandEvent } from '../../src/protocol/types.js'
import { decodeFrame, encodeFrame, MAX_FRAME_BYTES, TABLE_PROTOCOL, type WireDoc } from '../../src/protocol/wire.js'
import { CapturedLogger } from './captured-logger.js'

/** A frame exactly as it came off the table protocol, with what it decoded to. */
export interface ReceivedFrame {
  from: string
  bytes: Uint8Array
  text: string
  doc: WireDoc | undefined
}

export interface RawSeatInit {
  /** The node's config from prepareLocalTable: its identity, listen address and peers are used. */
  config: NodeConfig
  /** Answers this seat leaves out (a seat that never pledges, or pledges and withholds its nonce). */
  withhold?: ReadonlyArray<'pledge' | 'nonce' | 'ack'>
  /** Answers this seat sends twice in a row (a replay of its own message). */
  duplicate?: ReadonlyArray<'pledge' | 'nonce' | 'ack'>
  /**
   * The messenger's frame limit; raise it to send frames over the table's limit (an attacker is not
   * bound by our limits). Default MAX_FRAME_BYTES, like a Daemon.
   */
  maxFrameBytes?: number
  logger?: Logger
}

/**
 * A table seat without a Daemon: a plain libp2p node (createNode, the table's member gater) and a
 * messenger on the table protocol that keeps every frame it receives, byte for byte. It answers
 * with a real SeatMachine, so its pledges, nonces and countersignatures are correctly signed, and
 * it can also send anything at all (`sendRaw`), as a misbehaving member would.
 */
export class RawSeat {
  readonly frames: ReceivedFrame[] = []
  /** Documents this seat sent, in order. */
  readonly sent: Array<{ to: string, doc: Signed<unknown> }> = []
  readonly events: Array<{ hand: number, event: HandEvent }> = []
  readonly appended: Array<{ entry: string, hand: number, payload: unknown }> = []
  readonly refused: string[] = []
  /** Misbehaviour, changeable between hands. */
  readonly withhold: Set<string>
  readonly duplicate: Set<string>
  /** Runs on each decoded frame before the seat answers it: room for a misbehaving extra message. */
  beforeHandle: ((frame: ReceivedFrame) => Promise<void>) | undefined
  #waiters = new Set<() => void>()

  private constructor (
    readonly peerId: string,
    readonly node: Libp2p,
    readonly messenger: Messenger,
    readonly machine: SeatMachine,
    readonly logs: CapturedLogger | undefined,
    init: RawSeatInit
  ) {
    this.withhold = new Set(init.withhold ?? [])
    this.duplicate = new Set(init.duplicate ?? [])
  }

  static async start (init: RawSeatInit): Promise<RawSeat> {
    const { config } = init
    const identity = await loadOrCreateIdentity(config.dataDir)
    const captured = init.logger === undefined ? new CapturedLogger() : undefined
    const logger = init.logger ?? (captured as CapturedLogger).logger
    const members = new Set([config.table.dealer, ...config.table.seats.filter(s => s !== ROBOT)])
    const node = await createNode({ privateKey: identity.privateKey, listen: config.listen, members, logger })
    const messenger = await createMessenger(node, {
      protocol: TABLE_PROTOCOL,
      maxFrameBytes: init.maxFrameBytes ?? MAX_FRAME_BYTES,
      logger,
      addressBook: new Map(Object.entries(config.peers))
    })
    const machine = new SeatMachine({
      table: config.table,
      signer: signerFromSeed(identity.seed),
      timeouts: config.timeouts,
      beacon: null,
      now: () => Date.now(),
      random: (n) => new Uint8Array(randomBytes(n))
    })
    const seat = new RawSeat(identity.peerId, node, messenger, machine, captured, init)
    messenger.onFrame(async (from, bytes) => { await seat.#onFrame(from, bytes) })
    return seat
  }

  get seat (): number { return this.machine.seat }

  async #onFrame (from: string, bytes: Uint8Array): Promise<void> {
    let doc: WireDoc | undefined
    try { doc = decodeFrame(bytes) } catch (err) { this.refused.push((err as Error).message) }
    const frame: ReceivedFrame = { from, bytes, text: new TextDecoder().decode(bytes), doc }
    this.frames.push(frame)
    try {
      if (doc !== undefined) await this.beforeHandle?.(frame)
      if (doc !== undefined) await this.#execute(this.machine.receive(from, doc))
    } catch (err) {
      this.refused.push((err as Error).message)
    } finally {
      for (const w of [...this.#waiters]) w()
    }
  }

  async #execute (effects: Effect[]): Promise<void> {
    for (const e of effects) {
      if (e.kind === 'event') this.events.push({ hand: e.hand, event: e.event })
      else if (e.kind === 'append') this.appended.push({ entry: e.entry, hand: e.hand, payload: e.payload })
      else if (e.kind === 'send') {
        if (this.withhold.has(e.doc.type)) continue
        const times = this.duplicate.has(e.doc.type) ? 2 : 1
        for (let i = 0; i < times; i++) {
          this.sent.push({ to: e.to, doc: e.doc })
          await this.messenger.send(e.to, encodeFrame(e.doc))
        }
      }
    }
  }

  /** Sends any bytes as one frame on the table protocol. */
  async sendRaw (to: string, bytes: Uint8Array): Promise<void> {
    await this.messenger.send(to, bytes)
  }

  /** Resolves once `check` holds, re-checked after every frame this seat handles. */
  async until (check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    if (check()) return
    await new Promise<void>((resolve, reject) => {
      const test = (): void => { if (check()) { done(); resolve() } }
      const timer = setTimeout(() => { done(); reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)) }, timeoutMs)
      const done = (): void => { clearTimeout(timer); this.#waiters.delete(test) }
      this.#waiters.add(test)
    })
  }

  async stop (): Promise<void> {
    await this.messenger.close().catch(() => {})
    await this.node.stop()
  }
}
