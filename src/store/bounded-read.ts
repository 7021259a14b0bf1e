import { open } from 'node:fs/promises'

/** A file named on the command line or in a config that cannot be read as asked: the message says why, in a few words. */
export class BoundedReadError extends Error {
  /** The system's error code (ENOENT, EACCES, …) when the system refused. */
  readonly code: string | undefined
  /** The file holds more than the limit (callers word that in their own terms). */
  readonly tooLarge: boolean
  constructor (message: string, options: { code?: string, tooLarge?: boolean } = {}) {
    super(message)
    this.code = options.code
    this.tooLarge = options.tooLarge ?? false
  }
}

const systemError = (err: unknown): BoundedReadError => {
  const code = (err as NodeJS.ErrnoException).code
  return new BoundedReadError(code ?? (err as Error).message, { code })
}

/**
 * The bytes of a file a user named (a config, a beacon file, a transcript), at most `maxBytes`: a
 * device (/dev/zero, /dev/urandom) never ends and a huge file would fill memory, so only a regular
 * file or a pipe is read, and reading stops one byte past the limit. Throws BoundedReadError with
 * the reason (a directory, not a regular file or a pipe, over the limit) or the system's code
 * (ENOENT, EACCES, …).
 */
export async function readBounded (path: string, maxBytes: number): Promise<Buffer> {
  let handle
  try {
    handle = await open(path, 'r')
  } catch (err) {
    throw systemError(err)
  }
  try {
    const s = await handle.stat()
    if (s.isDirectory()) throw new BoundedReadError('it is a directory')
    if (!s.isFile() && !s.isFIFO()) throw new BoundedReadError('it is not a regular file or a pipe')
    if (s.isFile() && s.size > maxBytes) throw new BoundedReadError(`it is over ${maxBytes} bytes`, { tooLarge: true })
    const chunks: Buffer[] = []
    let total = 0
    for (;;) {
      const buf = Buffer.alloc(Math.min(65_536, maxBytes + 1 - total))
      const { bytesRead } = await handle.read(buf, 0, buf.length, null)
      if (bytesRead === 0) break
      chunks.push(buf.subarray(0, bytesRead))
      total += bytesRead
      if (total > maxBytes) throw new BoundedReadError(`it is over ${maxBytes} bytes`, { tooLarge: true })
    }
    return Buffer.concat(chunks, total)
  } catch (err) {
    if (err instanceof BoundedReadError) throw err
    throw systemError(err)
  } finally {
    await handle.close().catch(() => {})
  }
}
