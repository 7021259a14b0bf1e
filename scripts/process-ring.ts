// Why four node processes cost more CPU a hand than the same four daemons in one process
// (docs/network.md, "Where the CPU goes, by kind"): a ring of K nodes on loopback TCP passing one
// message round, each node doing the same work on it before passing it on, run three ways:
//
//   shared     K nodes in this process, sharing one copy of the work's code and data
//   copies     K nodes in this process, each with its own copy (K times the footprint, one process)
//   processes  K nodes, each an OS process of its own (node 0 is this one)
//
// The work is --fns distinct small functions, each over an object of its own shape (a large
// footprint of compiled code, inline caches and objects, as a daemon's libp2p, zod, machines and
// state are), and --json rounds of JSON.parse, a walk and JSON.stringify of a 5 KB document (a
// small footprint). One message is in flight, so in `processes` every hop wakes a sleeping process
// and the K processes take turns on the machine's cores. Prints CPU (user + system, every process)
// and wall time per hop. After `npm run build`:
//
//   node dist/scripts/process-ring.js --variant shared --fns 2000
//   node dist/scripts/process-ring.js --variant copies --fns 2000
//   node dist/scripts/process-ring.js --variant processes --fns 2000
import { fork, type ChildProcess } from 'node:child_process'
import { createServer, connect, type Socket } from 'node:net'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    variant: { type: 'string', default: 'shared' },
    nodes: { type: 'string', default: '4' },
    fns: { type: 'string', default: '2000' },
    json: { type: 'string', default: '0' },
    laps: { type: 'string', default: '3000' },
    port: { type: 'string', default: '39000' }
  }
})
const K = Number(args.nodes)
const FNS = Number(args.fns)
const JSON_ROUNDS = Number(args.json)
const LAPS = Number(args.laps)
const WARM_LAPS = 500
const BASE_PORT = Number(args.port)
const VARIANT = args.variant as 'shared' | 'copies' | 'processes'

interface Work { fns: Array<(o: Record<string, string>) => number>, objs: Array<Record<string, string>> }

/** FNS distinct functions, each with an object of a shape of its own. */
function makeWork (): Work {
  const fns: Work['fns'] = []
  const objs: Work['objs'] = []
  for (let i = 0; i < FNS; i++) {
    const key = `p${i}`
    // Generated, each from a source of its own: its own compiled code and inline caches, as distinct functions of a daemon have.
    fns.push(new Function('o', `let s = 0; for (const k in o) s += o[k].length; return s + o.${key}.length + ${i}`) as Work['fns'][number])
    objs.push({ [key]: 'x'.repeat(i % 17), [`q${i % 97}`]: 'yy', [`r${i % 89}`]: 'z' })
  }
  return { fns, objs }
}

const hex = (n: number): string => randomBytes(n).toString('hex')
const doc = (): unknown => ({ type: 'pledge', signer: `12D3KooW${hex(22)}`, sig: hex(64), body: { table: 't', hand: 7, commit: hex(32), seat: 2, nonceHash: hex(32) } })
const MESSAGE = JSON.stringify({ type: 'final', receipt: { commit: doc(), pledges: [doc(), doc(), doc(), doc()], nonces: [doc(), doc(), doc(), doc()], acks: [doc(), doc(), doc(), doc()] } })

/** The members in `x`, at every depth: a walk, as a schema check makes. */
const walk = (x: unknown): number => x !== null && typeof x === 'object' ? Object.values(x).reduce<number>((n, v) => n + 1 + walk(v), 0) : 0

function runWork (work: Work, text: string): number {
  let total = 0
  for (let i = 0; i < work.fns.length; i++) total += work.fns[i](work.objs[i])
  for (let r = 0; r < JSON_ROUNDS; r++) {
    const value = JSON.parse(text) as unknown
    total += walk(value) + JSON.stringify(value).length
  }
  return total
}

/** Length-prefixed messages on a socket. */
function onMessages (socket: Socket, handle: (text: string) => void): void {
  let buffer = Buffer.alloc(0)
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk])
    while (buffer.length >= 4) {
      const n = buffer.readUInt32BE(0)
      if (buffer.length < 4 + n) break
      const text = buffer.subarray(4, 4 + n).toString()
      buffer = buffer.subarray(4 + n)
      handle(text)
    }
  })
}
function sendMessage (socket: Socket, text: string): void {
  const body = Buffer.from(text)
  const head = Buffer.alloc(4)
  head.writeUInt32BE(body.length)
  socket.write(Buffer.concat([head, body]))
}

interface RingNode { connectNext: () => Promise<void>, kick: () => void }
/** Counts laps at node 0, which calls `lapped` after each and stops passing the message on when it returns false. */
async function ringNode (index: number, work: Work, lapped: () => boolean): Promise<RingNode> {
  let next: Socket | undefined
  const server = createServer(socket => {
    socket.setNoDelay(true)
    onMessages(socket, text => {
      if (runWork(work, text) < 0) console.log('never')
      if (index === 0 && !lapped()) return
      sendMessage(next as Socket, text)
    })
  })
  await new Promise<void>(resolve => server.listen(BASE_PORT + index, '127.0.0.1', resolve))
  return {
    connectNext: async () => {
      const socket = connect(BASE_PORT + (index + 1) % K, '127.0.0.1')
      socket.setNoDelay(true)
      await new Promise<void>(resolve => socket.once('connect', () => { resolve() }))
      next = socket
    },
    kick: () => { sendMessage(next as Socket, MESSAGE) }
  }
}

const ownCpuMs = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
const reply = async <T>(child: ChildProcess): Promise<T> => await new Promise<T>(resolve => child.once('message', m => { resolve(m as T) }))

/** `laps` laps round the ring from node 0; resolves when they are done. */
function lapsCounter (): { lapped: () => boolean, run: (laps: number, kick: () => void) => Promise<void> } {
  let left = 0
  let done: (() => void) | undefined
  return {
    lapped: () => { if (--left > 0) return true; done?.(); return false },
    run: async (laps, kick) => { left = laps; await new Promise<void>(resolve => { done = resolve; kick() }) }
  }
}

async function main (): Promise<void> {
  if (positionals[0] === 'child') {
    const node = await ringNode(Number(positionals[1]), makeWork(), () => true)
    process.on('message', (m: string) => {
      if (m === 'connect') void node.connectNext().then(() => process.send?.('connected'))
      if (m === 'cpu') process.send?.(ownCpuMs())
      if (m === 'exit') process.exit(0)
    })
    process.send?.('listening')
    return
  }
  const counter = lapsCounter()
  const nodes: RingNode[] = []
  const children: ChildProcess[] = []
  const shared = makeWork()
  const script = fileURLToPath(import.meta.url)
  if (VARIANT === 'processes') {
    nodes.push(await ringNode(0, shared, counter.lapped))
    for (let i = 1; i < K; i++) {
      const child = fork(script, ['child', String(i), '--nodes', String(K), '--fns', String(FNS), '--json', String(JSON_ROUNDS), '--port', String(BASE_PORT)])
      await reply(child)
      children.push(child)
    }
  } else {
    for (let i = 0; i < K; i++) nodes.push(await ringNode(i, VARIANT === 'copies' && i > 0 ? makeWork() : shared, counter.lapped))
  }
  for (const n of nodes) await n.connectNext()
  for (const c of children) { c.send('connect'); await reply(c) }
  const cpuMs = async (): Promise<number> => {
    let sum = ownCpuMs()
    for (const c of children) { c.send('cpu'); sum += await reply<number>(c) }
    return sum
  }
  await counter.run(WARM_LAPS, nodes[0].kick)
  const cpu0 = await cpuMs()
  const t0 = performance.now()
  await counter.run(LAPS, nodes[0].kick)
  const wall = performance.now() - t0
  const cpu = await cpuMs() - cpu0
  const hops = LAPS * K
  console.log(`${VARIANT}: ${K} nodes, ${FNS} functions and ${JSON_ROUNDS} JSON rounds a hop: ${(cpu * 1000 / hops).toFixed(1)} µs CPU a hop (every process), ${(wall * 1000 / hops).toFixed(1)} µs wall`)
  for (const c of children) c.send('exit')
  process.exit(0)
}

await main()
