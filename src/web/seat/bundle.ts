import { sha256Hex, utf8 } from '../../core/bytes.js'

/**
 * The bundle's SHA-256 as `npm run build` prints it (scripts/bundle-hash.mjs): SHA-256 over the
 * lines `SHA256(file)  path`, one per file of dist/web except source maps and bundle.json, sorted
 * by path. The page fetches bundle.json (the list of paths) and every file it names from the
 * server that served it, and hashes what it got: a server that changes any file changes the figure.
 */
export async function bundleHash (base = './'): Promise<string> {
  const res = await fetch(`${base}bundle.json`, { cache: 'no-store' })
  if (!res.ok) throw new Error(`bundle.json: HTTP ${res.status}`)
  const { files } = await res.json() as { files: string[] }
  const lines: string[] = []
  for (const path of [...files].sort()) {
    const file = await fetch(base + path, { cache: 'no-store' })
    if (!file.ok) throw new Error(`${path}: HTTP ${file.status}`)
    lines.push(`${sha256Hex(new Uint8Array(await file.arrayBuffer()))}  ${path}\n`)
  }
  return sha256Hex(utf8(lines.join('')))
}

/** Shows the figure in `target`; tried again a few times (the dealer's node restarts its server once every seat has joined). */
export async function showBundleHash (target: HTMLElement, tries = 5): Promise<void> {
  for (let i = 1; ; i++) {
    try { target.textContent = await bundleHash(); return } catch (err) {
      if (i >= tries) { target.textContent = `unknown (${(err as Error).message})`; return }
      await new Promise(resolve => setTimeout(resolve, 1_000))
    }
  }
}
