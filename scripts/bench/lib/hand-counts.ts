// What a hand does, counted in this process, so that a regression on the hot path shows as a number
// beside the CPU it costs: Ed25519 signatures and checks on Node's own Ed25519 (node:crypto) by
// document type, sockets' writes and bytes, streams opened by protocol, synced LevelDB writes and
// file syncs. The counters wrap the functions every caller reaches at run time (node:crypto's sign
// and verify, synced to their ESM bindings; net.Socket's write; LevelDB's _put, _del and _batch; a
// FileHandle's sync and datasync, and its writes when fs/promises' open gave it O_DSYNC; each given
// node's connections' newStream; the wire schema's and the receipt schema's safeParse), so nothing
// in src/ changes for them. Not counted: checks on the pure @noble path (its ed25519 object
// is frozen), which the daemon no longer uses on a hand's path (verify memo, witnessing: native).
import { createRequire, syncBuiltinESMExports } from 'node:module'
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { Socket } from 'node:net'
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import type { Libp2p } from '@libp2p/interface'
import { wireSchema } from '../../../src/protocol/wire.js'
import { receiptSchema } from '../../../src/core/hand/messages.js'

const require = createRequire(import.meta.url)

export interface HandCounts {
  /** Native Ed25519 signatures by document type (`libp2p` for messages that are not fairdeal documents). */
  signs: Record<string, number>
  /** Native Ed25519 checks, likewise. */
  verifies: Record<string, number>
  socketWrites: number
  socketBytes: number
  /** Outbound streams opened, by protocol. */
  streams: Record<string, number>
  /** LevelDB puts and batches written with `sync: true`. */
  syncedDbWrites: number
  /**
   * fsync/fdatasync of files (the head file and its directory when it is replaced), and writes
   * through a file handle opened with O_DSYNC (an append to the head file: each as durable as a
   * write and a datasync).
   */
  fileSyncs: number
  /**
   * Table frames parsed by the wire schema, by document type: every frame a node receives off the
   * network is parsed once (decodeFrame); the dealer's own seat is fed without a parse.
   */
  wireParses: Record<string, number>
  /** Receipts parsed by the receipt schema on their own (verifyReceipt on a receipt the wire schema had not checked). */
  receiptParses: number
  /**
   * This process's garbage collections by kind (V8's scavenges grow with what is allocated, the
   * other kinds with what is kept), and the ms its main thread spent in them (the GC's helper
   * threads work beside it, uncounted here, counted in the CPU per hand).
   */
  gcs: Record<string, number>
  gcMs: number
}

const empty = (): HandCounts => ({ signs: {}, verifies: {}, socketWrites: 0, socketBytes: 0, streams: {}, syncedDbWrites: 0, fileSyncs: 0, wireParses: {}, receiptParses: 0, gcs: {}, gcMs: 0 })
let counts = empty()
let installed = false

const PREFIX = new TextEncoder().encode('fairdeal/v1/')
/**
 * The document type a signed message is for (signed.ts: `fairdeal/v1/<type>\n<signer>\n<body>`).
 * Read off the bytes: it runs on every signature of the hands it counts, and its CPU is theirs.
 */
function kindOf (message: unknown): string {
  if (!(message instanceof Uint8Array) || message.length < PREFIX.length) return 'libp2p'
  for (let i = 0; i < PREFIX.length; i++) if (message[i] !== PREFIX[i]) return 'libp2p'
  const end = message.indexOf(10, PREFIX.length)
  if (end < 0 || end >= 64) return 'fairdeal'
  let kind = ''
  for (let i = PREFIX.length; i < end; i++) kind += String.fromCharCode(message[i])
  return kind
}

const bump = (map: Record<string, number>, key: string): void => { map[key] = (map[key] ?? 0) + 1 }

/** perf_hooks' GC kinds (an entry's `detail.kind`). */
const GC_KINDS: Record<number, string> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking',
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks'
}

/** Installs the process-wide counters (once); they count from then on. */
export async function installHandCounts (): Promise<void> {
  if (installed) return
  installed = true
  const crypto = require('node:crypto') as typeof import('node:crypto')
  const sign = crypto.sign
  const verify = crypto.verify
  crypto.sign = ((alg: unknown, data: unknown, key: unknown, cb?: unknown) => { bump(counts.signs, kindOf(data)); return (sign as any)(alg, data, key, cb) }) as typeof crypto.sign
  crypto.verify = ((alg: unknown, data: unknown, key: unknown, sig: unknown, cb?: unknown) => { bump(counts.verifies, kindOf(data)); return (verify as any)(alg, data, key, sig, cb) }) as typeof crypto.verify
  // ESM imports of node:crypto (native-crypto.ts, @libp2p/crypto) see the wrapped functions too.
  syncBuiltinESMExports()

  const write = Socket.prototype.write
  Socket.prototype.write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
    counts.socketWrites++
    counts.socketBytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : (chunk as Uint8Array).byteLength ?? 0
    return (write as any).call(this, chunk, ...rest)
  } as typeof write

  // Level is ClassicLevel: its prototype holds the calls into LevelDB (sublevels end in them too).
  const level = Level.prototype as any
  const put = level._put
  const del = level._del
  const batch = level._batch
  level._put = function (this: unknown, key: unknown, value: unknown, options: { sync?: boolean } | undefined) {
    if (options?.sync === true) counts.syncedDbWrites++
    return put.call(this, key, value, options)
  }
  level._del = function (this: unknown, key: unknown, options: { sync?: boolean } | undefined) {
    if (options?.sync === true) counts.syncedDbWrites++
    return del.call(this, key, options)
  }
  level._batch = function (this: unknown, ops: unknown, options: { sync?: boolean } | undefined) {
    if (options?.sync === true) counts.syncedDbWrites++
    return batch.call(this, ops, options)
  }

  // zod keeps safeParse on each schema object: the callers (decodeFrame, verifyReceipt) reach these.
  const wireParse = wireSchema.safeParse.bind(wireSchema)
  ;(wireSchema as { safeParse: unknown }).safeParse = (value: unknown, ...rest: unknown[]) => {
    const type = (value as { type?: unknown } | null)?.type
    bump(counts.wireParses, typeof type === 'string' ? type : '?')
    return (wireParse as (...a: unknown[]) => unknown)(value, ...rest)
  }
  const receiptParse = receiptSchema.safeParse.bind(receiptSchema)
  ;(receiptSchema as { safeParse: unknown }).safeParse = (...args: unknown[]) => {
    counts.receiptParses++
    return (receiptParse as (...a: unknown[]) => unknown)(...args)
  }

  // Entries come a moment after each collection: a figure's count may be off by the last one or two.
  new PerformanceObserver(list => {
    for (const e of list.getEntries()) {
      bump(counts.gcs, GC_KINDS[(e as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other')
      counts.gcMs += e.duration
    }
  }).observe({ entryTypes: ['gc'] })

  // A FileHandle's prototype, from a handle on a file of our own.
  const probe = await open(join(tmpdir(), `fairdeal-bench-probe-${process.pid}`), 'w')
  const fileHandle = Object.getPrototypeOf(probe) as { sync: () => Promise<void>, datasync: () => Promise<void> }
  await probe.close()
  const fsync = fileHandle.sync
  const fdatasync = fileHandle.datasync
  fileHandle.sync = async function (this: unknown) { counts.fileSyncs++; await fsync.call(this) }
  fileHandle.datasync = async function (this: unknown) { counts.fileSyncs++; await fdatasync.call(this) }
  // Handles opened with O_DSYNC: each write on one is a synced write.
  const dsync = new WeakSet<object>()
  const promises = require('node:fs/promises') as { open: (path: unknown, flags?: unknown, mode?: unknown) => Promise<object> }
  const openFile = promises.open
  promises.open = async (path, flags, mode) => {
    const handle = await openFile(path, flags, mode)
    if (typeof flags === 'number' && (flags & (constants.O_DSYNC ?? 0)) !== 0) dsync.add(handle)
    return handle
  }
  const handleWrite = (fileHandle as unknown as { write: (...args: unknown[]) => Promise<unknown> }).write
  ;(fileHandle as unknown as { write: unknown }).write = async function (this: object, ...args: unknown[]) {
    if (dsync.has(this)) counts.fileSyncs++
    return await handleWrite.apply(this, args)
  }
  // ESM imports of node:fs/promises (head-file.ts) see the wrapped open too.
  syncBuiltinESMExports()
}

/** Counts the outbound streams `node` opens on its connections (its dials of a protocol among them), by protocol. */
export function countStreams (node: Libp2p): void {
  const wrapped = new WeakSet<object>()
  const wrap = (connection: any): void => {
    if (wrapped.has(connection)) return
    wrapped.add(connection)
    const open = connection.newStream.bind(connection)
    connection.newStream = async (protocols: any, options?: any) => {
      bump(counts.streams, [protocols].flat()[0] as string)
      return await open(protocols, options)
    }
  }
  for (const c of node.getConnections()) wrap(c)
  node.addEventListener('connection:open', evt => { wrap(evt.detail) })
}

/** The counts since the last call, and starts again from zero. */
export function takeHandCounts (): HandCounts {
  const out = counts
  counts = empty()
  return out
}

/** One line per kind of count, per hand. */
export function formatHandCounts (c: HandCounts, hands: number): string[] {
  const per = (n: number): string => (n / hands).toFixed(n / hands >= 10 ? 0 : 1)
  // Garbage collections, fewer than one a hand, are counted per 100 hands.
  const per100 = (n: number): string => (100 * n / hands).toFixed(0)
  const byKind = (m: Record<string, number>, scale = per): string => {
    const total = Object.values(m).reduce((x, y) => x + y, 0)
    return `${scale(total)} (` + Object.entries(m).sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${scale(n)}`).join(', ') + ')'
  }
  return [
    `Ed25519 (native) signatures ${byKind(c.signs)}`,
    `Ed25519 (native) verifications ${byKind(c.verifies)}`,
    `socket writes ${per(c.socketWrites)}, ${per(c.socketBytes)} bytes; streams opened ${byKind(c.streams)}`,
    `synced writes: LevelDB ${per(c.syncedDbWrites)}, files ${per(c.fileSyncs)} (fsync, fdatasync and O_DSYNC writes)`,
    `table frames received and schema-parsed ${byKind(c.wireParses)}; receipts parsed again ${per(c.receiptParses)}`,
    `garbage collections ${byKind(c.gcs, per100)} per 100 hands, ${(c.gcMs / hands).toFixed(2)} ms of the main thread a hand`
  ]
}
