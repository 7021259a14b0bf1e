import { createReadStream } from 'node:fs'
import { MAX_ENTRY_BYTES } from '../core/log/format.js'
import { LogInputError } from './errors.js'

/**
 * Bounds on what is read before giving up on an input that is no log at all (`/dev/zero`, random
 * bytes through a pipe): a line longer than this is not skipped to its end…
 */
export const MAX_SKIPPED_LINE_BYTES = 1024 * 1024
/** …and this many lines in a row that do not even start like a JSON object end the reading. */
export const MAX_GARBAGE_LINES = 1000

/**
 * The lines of a JSON Lines file (or stdin for `-`) as bytes, read in chunks: memory stays bounded
 * whatever the file's size. A line longer than an entry may be is not buffered: it comes out as a
 * placeholder of MAX_ENTRY_BYTES + 1 bytes, which the verifier refuses for its length. Reading
 * stops with a LogInputError on a line over {@link MAX_SKIPPED_LINE_BYTES}, or after
 * {@link MAX_GARBAGE_LINES} lines in a row that do not start with `{`.
 * A final newline is optional; CRLF line ends are accepted.
 */
export async function * readJsonLines (path: string): AsyncGenerator<Uint8Array> {
  const input = path === '-' ? process.stdin : createReadStream(path, { highWaterMark: 256 * 1024 })
  const name = path === '-' ? 'stdin' : path
  let carry: Uint8Array = new Uint8Array(0)
  let oversize = 0
  let lineNo = 0
  let garbage = 0
  const emit = (line: Uint8Array): Uint8Array => {
    lineNo++
    if (oversize > 0) { oversize = 0; garbage = 0; return new Uint8Array(MAX_ENTRY_BYTES + 1) }
    const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length
    garbage = end > 0 && line[0] === 0x7b ? 0 : garbage + 1
    if (garbage >= MAX_GARBAGE_LINES) throw new LogInputError(`${name}: ${MAX_GARBAGE_LINES} lines in a row up to line ${lineNo} are not JSON objects: not a log (stopped reading)`)
    // A copy of just the line: Buffer#slice would share the chunk, and posting a view to a worker
    // thread clones its whole underlying buffer.
    const out = new Uint8Array(end)
    out.set(line.subarray(0, end))
    return out
  }
  try {
    for await (const chunk of input as AsyncIterable<Uint8Array>) {
      let start = 0
      let nl = chunk.indexOf(0x0a)
      while (nl !== -1) {
        const piece = chunk.subarray(start, nl)
        if (oversize > 0) oversize += piece.length
        yield emit(carry.length > 0 ? concat(carry, piece) : piece)
        carry = new Uint8Array(0)
        start = nl + 1
        nl = chunk.indexOf(0x0a, start)
      }
      if (start < chunk.length) {
        if (oversize > 0) oversize += chunk.length - start
        else {
          carry = concat(carry, chunk.subarray(start))
          if (carry.length > MAX_ENTRY_BYTES + 1) { oversize = carry.length; carry = new Uint8Array(0) }
        }
        if (oversize > MAX_SKIPPED_LINE_BYTES) {
          throw new LogInputError(`${name}: line ${lineNo + 1} is over ${MAX_SKIPPED_LINE_BYTES} bytes: not a log (stopped reading)`)
        }
      }
    }
    if (carry.length > 0 || oversize > 0) yield emit(carry)
  } finally {
    if (path !== '-') (input as ReturnType<typeof createReadStream>).destroy()
  }
}

function concat (a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}
