import type { Log } from '../store/log.js'

/** How far back from the head a recall looks (entries of every table the node logs), in windows of RECALL_WINDOW. */
const RECALL_LIMIT = 4096
const RECALL_WINDOW = 32

/**
 * The receipt of `hand` at `table` as the node's own log holds it (the last such entry), read
 * backwards from the head a window at a time, at most RECALL_LIMIT entries back; undefined when it
 * is not there. The blind dealer asks for it (a `recall` effect) to answer a seat that missed the
 * hand with the whole receipt (docs/dealer-blind.md §12, ASK).
 */
export async function loggedReceipt (log: Log, table: string, hand: number): Promise<unknown> {
  const head = log.head()
  if (head === null) return undefined
  const last = head.body.seq
  for (let to = last; to >= 0 && last - to < RECALL_LIMIT; to -= RECALL_WINDOW) {
    let found: unknown
    for await (const e of log.read({ from: Math.max(0, to - RECALL_WINDOW + 1), to })) {
      const payload = e.body.payload as { commit?: { body?: { table?: unknown, hand?: unknown } } } | null
      if (e.body.kind === 'receipt' && payload?.commit?.body?.table === table && payload.commit.body.hand === hand) found = payload
    }
    if (found !== undefined) return found
  }
  return undefined
}
