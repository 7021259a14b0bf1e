import { main } from '../../src/cli/main.js'

export interface CliRun { code: number, stdout: string, stderr: string }

let running = false

/**
 * `fairdeal ARGS…` run in this process through the CLI's own entry point (`main`, what bin/fairdeal.js
 * calls), with stdout and stderr captured: the same exit code and the same bytes as a spawned CLI,
 * without the half second a new Node process costs. For tables of bad-input cases; every command
 * keeps at least one test that spawns the real binary, which proves the wiring around `main`.
 * An error `main` lets escape is what would print a stack trace: code -1, the stack on stderr.
 */
export async function cliInProcess (...args: string[]): Promise<CliRun> {
  if (running) throw new Error('cliInProcess: one run at a time (it captures the process\'s stdout and stderr)')
  running = true
  let stdout = ''
  let stderr = ''
  const out = process.stdout.write
  const err = process.stderr.write
  const capture = (append: (s: string) => void) => ((chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'))
    const done = rest.find(r => typeof r === 'function') as (() => void) | undefined
    done?.()
    return true
  }) as typeof process.stdout.write
  process.stdout.write = capture(s => { stdout += s })
  process.stderr.write = capture(s => { stderr += s })
  // `fairdeal node` tightens the umask for what it writes: the process's own is given back after.
  const umask = process.umask(0o022)
  process.umask(umask)
  try {
    const code = await main(args)
    return { code, stdout, stderr }
  } catch (e) {
    return { code: -1, stdout, stderr: stderr + String((e as Error)?.stack ?? e) }
  } finally {
    process.stdout.write = out
    process.stderr.write = err
    process.umask(umask)
    running = false
  }
}
