import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { controlOfSpawnedNode, type ControlClient } from '../../src/daemon/control-client.js'
import type { EventWatcher, NodeEvent } from '../../src/daemon/events.js'
import type { LogLine } from './captured-logger.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const BIN = join(ROOT, 'bin', 'fairdeal.js')

/** Fails early, with the fix, when the CLI has not been built (`npm test` builds first). */
export function requireBuild (): void {
  if (!existsSync(join(ROOT, 'dist', 'src', 'cli', 'main.js'))) {
    throw new Error('dist/ is missing: run `npx tsc -p tsconfig.json` (or `npm test`, which builds) before this test')
  }
}

/**
 * `fairdeal node --config FILE` as its own OS process, found through the control file it writes
 * into its data directory (with its pid, so a file left by a killed run is not mistaken for it).
 */
export class NodeProcess {
  /** The node's pino JSON lines from stdout. */
  readonly lines: LogLine[] = []
  readonly exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  #client: ControlClient | undefined
  #events: EventWatcher | undefined
  #stderr = ''

  private constructor (readonly child: ChildProcess) {
    this.exited = new Promise(resolve => child.once('exit', (code, signal) => { resolve({ code, signal }) }))
    let partial = ''
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n')
      partial = parts.pop() ?? ''
      for (const p of parts) {
        if (p.trim() === '') continue
        try { this.lines.push(JSON.parse(p) as LogLine) } catch { this.lines.push({ level: 0, msg: p }) }
      }
    })
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => { this.#stderr += chunk })
  }

  get client (): ControlClient {
    if (this.#client === undefined) throw new Error('the node has not started')
    return this.#client
  }

  static async start (configFile: string, dataDir: string, timeoutMs = 30_000): Promise<NodeProcess> {
    requireBuild()
    const child = spawn(process.execPath, [BIN, 'node', '--config', configFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FAIRDEAL_LOG_LEVEL: 'info' }
    })
    const p = new NodeProcess(child)
    p.#client = await controlOfSpawnedNode(child, dataDir, { timeoutMs, detail: () => `: ${p.#stderr.trim()}` })
    p.#events = p.#client.watch()
    return p
  }

  /** The first event of the node's feed (through its control endpoint's long poll) that `match` accepts. */
  async until (match: (e: NodeEvent) => boolean, what: string, timeoutMs = 15_000): Promise<NodeEvent> {
    if (this.#events === undefined) throw new Error('the node has not started')
    return await this.#events.until(match, what, timeoutMs)
  }

  /** SIGKILL: no shutdown code runs, exactly like a crash or a power cut. */
  async kill (): Promise<void> {
    this.child.kill('SIGKILL')
    await this.exited
  }

  /** SIGTERM, the orderly stop; SIGKILL if it hangs. */
  async stop (): Promise<{ code: number | null, signal: NodeJS.Signals | null }> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return await this.exited
    this.child.kill('SIGTERM')
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000)
    try { return await this.exited } finally { clearTimeout(timer) }
  }
}
