import { createReadStream } from 'node:fs'
import { MAX_ENTRY_BYTES } from '../core/log/format.js'

/**
 * The lines of a JSON Lines file (or stdin for `-`) as bytes, read in chunks: memory stays bounded
 * whatever the file's size. A line longer than an entry may be is not buffered: it comes out as a
 * placeholder of MAX_ENTRY_BYTES + 1 bytes, which the verifier refuses for its length.
 * A final newline is optional; CRLF line ends are accepted.
 */
export async function * readJsonLines (path: string): AsyncGenerator<Uint8Array> {
  const input = path === '-' ? process.stdin : createReadStream(path, { highWaterMark: 256 * 1024 })
  let carry: Uint8Array = new Uint8Array(0)
  let oversize = false
  const emit = (line: Uint8Array): Uint8Array => {
    if (oversize) { oversize = false; return new Uint8Array(MAX_ENTRY_BYTES + 1) }
    const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length
    // A copy of just the line: Buffer#slice would share the chunk, and posting a view to a worker
    // thread clones its whole underlying buffer.
    const out = new Uint8Array(end)
    out.set(line.subarray(0, end))
    return out
  }
  for await (const chunk of input as AsyncIterable<Uint8Array>) {
    let start = 0
    let nl = chunk.indexOf(0x0a)
    while (nl !== -1) {
      const piece = chunk.subarray(start, nl)
      yield emit(carry.length > 0 ? concat(carry, piece) : piece)
      carry = new Uint8Array(0)
      start = nl + 1
      nl = chunk.indexOf(0x0a, start)
    }
    if (start < chunk.length && !oversize) {
      carry = concat(carry, chunk.subarray(start))
      if (carry.length > MAX_ENTRY_BYTES + 1) { oversize = true; carry = new Uint8Array(0) }
    }
  }
  if (carry.length > 0 || oversize) yield emit(carry)
}

function concat (a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}
