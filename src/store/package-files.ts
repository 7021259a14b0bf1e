// Where this package's own files are (bin/, dist/, config/), found from the running module. The
// CLI runs from a bundle (dist/cli/, made by `npm run build`), the tests and the bench from
// dist/src/ or src/: a path written relative to a module's own URL would differ between them, so
// every such path is taken from the package root instead.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

let root: string | undefined

/** The directory holding fairdeal's package.json, above the running module. */
export function packageRoot (): string {
  if (root !== undefined) return root
  const start = dirname(fileURLToPath(import.meta.url))
  for (let dir = start; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json')
    if (existsSync(file) && isFairdeal(file)) return (root = dir)
    if (dirname(dir) === dir) throw new Error(`fairdeal's package.json not found above ${start}`)
  }
}

function isFairdeal (file: string): boolean {
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name === 'fairdeal'
  } catch {
    return false
  }
}

/** bin/fairdeal.js, which child processes (demos, member processes) run. */
export const binPath = (): string => join(packageRoot(), 'bin', 'fairdeal.js')

/** dist/web/, the built pages. */
export const webRoot = (): string => join(packageRoot(), 'dist', 'web')

/**
 * The URL of a built module of dist/src/ (`store/check-worker.js`), for worker threads: a worker
 * loads the unbundled module, whichever form its parent runs in.
 */
export const distModuleUrl = (path: string): URL => pathToFileURL(join(packageRoot(), 'dist', 'src', path))
