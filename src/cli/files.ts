import { access } from 'node:fs/promises'

/** Whether `path` is there (a file or a directory this process may look at). */
export async function exists (path: string): Promise<boolean> {
  try { await access(path); return true } catch { return false }
}
