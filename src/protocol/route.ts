/**
 * Which machine of a node a document is for. A dealer node may also hold a seat, so both machines
 * can live behind one peer id: seats' answers go to the dealer machine, the dealer's messages to the
 * seat machine. A NONCE goes to the dealer machine on the dealer's node (`self` = the receiving
 * node's peer id) and to the seat machine anywhere else (a seat sends its NONCE to the other seats
 * too).
 */
export function isForDealer (type: string, from: string, dealer: string, self: string): boolean {
  if (type === 'nonce') return self === dealer
  if (type === 'pledge' || type === 'ack' || type === 'ask' || type === 'relay') return true
  // A seat's abort record and its dealer-blind documents go to the dealer; the same types coming
  // from the dealer are relayed ones, for the seat.
  if (type === 'abort' || BLIND_SEAT_DOCS.has(type)) return from !== dealer
  return false
}

const BLIND_SEAT_DOCS: ReadonlySet<string> = new Set(['bkey', 'bshuffle', 'bshares', 'bsecret'])
