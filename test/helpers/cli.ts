import { spawn } from 'node:child_process'
import { join } from 'node:path'

export const repoRoot = join(import.meta.dirname, '..', '..')
const bin = join(repoRoot, 'bin', 'fairdeal.js')

export interface CliResult { code: number | null, stdout: string, stderr: string, lines: string[] }

/** Runs the built CLI in its own process, as a user would; `lines` are stdout's non-empty lines. */
export async function fairdeal (...args: string[]): Promise<CliResult> {
  return await fairdealWithEnv({}, ...args)
}

/** The same, with extra environment variables (FAIRDEAL_LOG_LEVEL, NO_COLOR, …). */
export async function fairdealWithEnv (env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, [bin, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  const code = await new Promise<number | null>(resolve => child.on('exit', resolve))
  return { code, stdout, stderr, lines: stdout.split('\n').filter(l => l !== '') }
}

/** A captured run (spawned or in process) with its stdout's non-empty lines. */
export function withLines<T extends { stdout: string }> (r: T): T & { lines: string[] } {
  return { ...r, lines: r.stdout.split('\n').filter(l => l !== '') }
}
