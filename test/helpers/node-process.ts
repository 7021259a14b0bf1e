import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CONTROL_FILE } from '../../src/daemon/control.js'
import { ControlClient } from '../../src/daemon/control-client.js'
import type { NodeEvent } from '../../src/daemon/events.js'
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
  readonly seen: NodeEvent[] = []
  readonly exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
  #client: ControlClient | undefined
  #cursor = 0
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
    const controlFile = join(dataDir, CONTROL_FILE)
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const text = await readFile(controlFile, 'utf8').catch(() => '')
      if (text.includes(`"pid":${child.pid ?? -1},`)) break
      if (child.exitCode !== null) throw new Error(`fairdeal node exited with code ${child.exitCode}: ${p.#stderr.trim()}`)
      if (Date.now() > deadline) { child.kill('SIGKILL'); throw new Error(`fairdeal node did not start within ${timeoutMs} ms: ${p.#stderr.trim()}`) }
      // The control file is the only sign of readiness the process gives; poll it.
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    p.#client = await ControlClient.forDataDir(dataDir)
    return p
  }

  /** The first event of the node's feed (through its control endpoint's long poll) that `match` accepts. */
  async until (match: (e: NodeEvent) => boolean, what: string, timeoutMs = 15_000): Promise<NodeEvent> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const hit = this.seen.find(match)
      if (hit !== undefined) return hit
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
      const { events } = await this.client.events(this.#cursor, Math.min(left, 5_000))
      for (const e of events) { this.seen.push(e); this.#cursor = e.seq }
    }
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
