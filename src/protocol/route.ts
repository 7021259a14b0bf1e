/**
 * Which machine of a node a document is for. A dealer node may also hold a seat, so both machines
 * can live behind one peer id: seats' answers go to the dealer machine, the dealer's messages to the
 * seat machine.
 */
export function isForDealer (type: string, from: string, dealer: string): boolean {
  if (type === 'pledge' || type === 'nonce' || type === 'ack' || type === 'ask' || type === 'relay') return true
  // A seat's abort record and its dealer-blind documents go to the dealer; the same types coming
  // from the dealer are relayed ones, for the seat.
  if (type === 'abort' || BLIND_SEAT_DOCS.has(type)) return from !== dealer
  return false
}

const BLIND_SEAT_DOCS: ReadonlySet<string> = new Set(['bkey', 'bshuffle', 'bshares', 'bsecret'])
