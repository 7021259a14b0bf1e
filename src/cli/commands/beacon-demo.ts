import { defineCommand, type OptionSpecs, type ParsedArgs } from '../command.js'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { openSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { pino } from 'pino'
import { UsageError } from '../errors.js'
import { parseIntOption } from '../options.js'
import { quietOnClosedStdout } from '../stdout.js'
import { defaultThreshold, roundAt, type ChainInfo } from '../../core/beacon/index.js'
import { prepareLocalGroup } from '../../beacon/group/local-group.js'
import { startGroupNode } from '../../beacon/group/node.js'
import { fetchMemberStatus, summarize } from '../../beacon/group/observe.js'
import { createLogger } from '../../daemon/logger.js'
import { NodeInputError } from '../../daemon/errors.js'
import { binPath } from '../../store/package-files.js'

const USAGE = `usage: fairdeal beacon demo --members N [--threshold T] [--period S] [--processes] [--duration S] [--json]

Runs a beacon group of N members on 127.0.0.1 with no setup: identities, a DKG (Joint-Feldman, no
trusted dealer), then threshold BLS rounds every S seconds, each member serving drand's v1 HTTP
API. Any drand client verifies the rounds against the printed chain info.

  --members N     group size, 1 to 64 (required)
  --threshold T   partial signatures needed per round (default floor(N/2) + 1)
  --period S      seconds between rounds (default 1)
  --processes     each member in its own OS process ('fairdeal node --config memberI.json')
  --duration S    stop S seconds after the first round is out (default: run until interrupted)
  --json          first line {"info", "relays"} once the first round is out; last line the run's figures

Everything lives in a temporary directory, removed at exit (kept, with each member process's log
in memberI.json.log, when FAIRDEAL_DEMO_KEEP is set). Each DKG phase waits up to 20 s (60 s with --processes) for slow
members; with everyone up it ends as soon as everything is in.`

const BIN = binPath()

const OPTIONS = {
  members: { type: 'string' },
  threshold: { type: 'string' },
  period: { type: 'string' },
  processes: { type: 'boolean' },
  duration: { type: 'string' },
  json: { type: 'boolean' }
} satisfies OptionSpecs

export const command = defineCommand({
  name: 'beacon demo',
  summary: 'run a beacon group of N nodes on loopback and watch its rounds',
  help: USAGE,
  options: OPTIONS,
  run
})

async function run ({ values }: ParsedArgs<typeof OPTIONS>): Promise<number> {
  quietOnClosedStdout()
  const n = parseIntOption(values.members, '--members', 1, 64)
  if (n === undefined) throw new UsageError('--members N is required')
  const threshold = parseIntOption(values.threshold, '--threshold', 1, n) ?? defaultThreshold(n)
  const period = parseIntOption(values.period, '--period', 1, 3600) ?? 1
  const duration = parseIntOption(values.duration, '--duration', 1, 86_400)
  const json = values.json === true
  const say = (line: string): void => { if (!json) process.stdout.write(line + '\n') }

  const root = await mkdtemp(join(tmpdir(), 'fairdeal-beacon-demo-'))
  const processes = values.processes === true
  const group = await prepareLocalGroup({ root, members: n, threshold, period, startInMs: processes ? 1000 : 2000, phaseMs: processes ? 60_000 : 20_000 })
  const stop = new AbortController()
  const onSignal = (): void => { stop.abort() }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const children: ChildProcess[] = []
  const inProcess: Array<Awaited<ReturnType<typeof startGroupNode>>> = []
  let stderr = ''
  try {
    say(`beacon group: ${n} members, threshold ${threshold}, a round every ${period} s${processes ? ', one OS process each' : ''} (data in ${root})`)
    if (processes) {
      for (const file of group.files) {
        const child = spawn(process.execPath, [BIN, 'node', '--config', file], { stdio: ['ignore', process.env.FAIRDEAL_DEMO_KEEP !== undefined ? openSync(file + '.log', 'w') : 'ignore', 'pipe'], env: { ...process.env, FAIRDEAL_LOG_LEVEL: process.env.FAIRDEAL_LOG_LEVEL ?? 'warn' } })
        child.stderr?.setEncoding('utf8').on('data', (c: string) => { stderr = (stderr + c).slice(-4000) })
        children.push(child)
      }
    } else {
      const logger = process.env.FAIRDEAL_LOG_LEVEL !== undefined ? createLogger({ fd: 2 }) : pino({ level: 'silent' })
      // All at once: a member that is not up by the deal phase's deadline is left out of the DKG.
      const started = await Promise.allSettled(group.configs.map(async (config, i) => await startGroupNode({ config, dataDir: group.dataDirs[i], logger: logger.child({ member: i + 1 }), ownLog: true })))
      for (const s of started) if (s.status === 'fulfilled') inProcess.push(s.value)
      const failed = started.find(s => s.status === 'rejected')
      if (failed !== undefined) throw (failed as PromiseRejectedResult).reason
    }
    // The DKG: wait until every member serves the chain (or one says it failed).
    const dkgDeadline = group.configs[0].params.dkg.start + 3 * group.configs[0].params.dkg.phaseMs + 120_000
    let chain: ChainInfo | undefined
    while (chain === undefined) {
      if (stop.signal.aborted) return 130
      const dead = children.find(c => c.exitCode !== null)
      if (dead !== undefined) throw new NodeInputError(`a member process exited (${String(dead.exitCode)}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`)
      const statuses = await Promise.all(group.urls.map(async u => await fetchMemberStatus(u)))
      const failed = statuses.find(s => s?.phase === 'dkg-failed')
      if (failed !== undefined) throw new NodeInputError(`the DKG failed: ${failed.failure ?? 'unknown reason'}`)
      if (statuses.every(s => s?.phase === 'rounds' && s.chain !== undefined)) {
        const hashes = new Set(statuses.map(s => s?.chain?.hash))
        if (hashes.size !== 1) throw new NodeInputError('the members finished the DKG with different chains')
        chain = statuses[0]?.chain
      } else if (Date.now() > dkgDeadline) {
        throw new NodeInputError('the DKG did not finish in time')
      } else await delay(250)
    }
    const relays = group.urls.map(u => `${u}/${chain.hash}`)
    say(`DKG done: chain ${chain.hash}, group key ${chain.public_key.slice(0, 24)}…; first round at ${new Date(chain.genesis_time * 1000).toISOString()}`)
    // The first round: printed once member 1 serves it.
    let first = 0
    while (first === 0) {
      if (stop.signal.aborted) return 130
      try {
        const res = await fetch(`${relays[0]}/public/latest`, { signal: AbortSignal.timeout(2000) })
        if (res.ok) first = ((await res.json()) as { round: number }).round
      } catch { /* not yet */ }
      if (first === 0) await delay(50)
    }
    if (json) process.stdout.write(JSON.stringify({ info: chain, relays }) + '\n')
    say(`round ${first} is out; relays:\n${relays.map(r => '  ' + r).join('\n')}`)
    const endAt = duration !== undefined ? Date.now() + duration * 1000 : Infinity
    let shown = first
    while (!stop.signal.aborted && Date.now() < endAt) {
      await delay(Math.min(200, Math.max(0, endAt - Date.now())), undefined, { signal: stop.signal }).catch(() => {})
      if (!json) {
        const s = await fetchMemberStatus(group.urls[0])
        if (s !== undefined && s.latestRound > shown) {
          shown = s.latestRound
          const e = await fetch(`${relays[0]}/public/${shown}`).then(async r => await r.json() as { randomness: string }).catch(() => undefined)
          say(`round ${shown}: ${e?.randomness ?? '?'}`)
        }
      }
    }
    const last = roundAt(chain, Date.now()) - 1 // the current round may still be in flight
    const statuses = await Promise.all(group.urls.map(async u => await fetchMemberStatus(u)))
    const summary = summarize(chain, statuses, first, Math.max(first, last), n, threshold)
    if (json) process.stdout.write(JSON.stringify(summary) + '\n')
    else say(`${summary.rounds} rounds, ${summary.missed} missed, DKG ${summary.dkgMs} ms, round latency p50 ${summary.roundLatencyMs.p50} ms, p99 ${summary.roundLatencyMs.p99} ms`)
    return 0
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await Promise.all(inProcess.map(async m => await m.stop().catch(() => {})))
    await Promise.all(children.map(async c => {
      if (c.exitCode !== null || c.signalCode !== null) return
      const exited = new Promise<void>(resolve => c.once('exit', () => { resolve() }))
      c.kill('SIGTERM')
      await Promise.race([exited, delay(5000).then(() => { c.kill('SIGKILL') })])
    }))
    if (process.env.FAIRDEAL_DEMO_KEEP === undefined) await rm(root, { recursive: true, force: true })
  }
}
