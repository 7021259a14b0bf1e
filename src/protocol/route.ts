/**
 * Which machine of a node a document is for. A dealer node may also hold a seat, so both machines
 * can live behind one peer id: seats' answers go to the dealer machine, the dealer's messages to the
 * seat machine. A NONCE goes to the dealer machine on the dealer's node (`self` = the receiving
 * node's peer id) and to the seat machine anywhere else (a seat sends its NONCE to the other seats
 * too).
 */
export function isForDealer (type: string, from: string, dealer: string, self: string): boolean {
  // A VIEW goes to the dealer too (it keeps them as evidence, §6 step 4); see isAlsoForSeat.
  if (type === 'nonce' || type === 'view') return self === dealer
  if (type === 'pledge' || type === 'ack' || type === 'ask' || type === 'relay') return true
  // A seat's abort record and its dealer-blind documents go to the dealer; the same types coming
  // from the dealer are relayed ones, for the seat; so are a played hand's actions (PLAY).
  if (type === 'abort' || type === 'play' || BLIND_SEAT_DOCS.has(type)) return from !== dealer
  return false
}

/**
 * A VIEW from another peer that reaches the dealer's node is for both its machines: the dealer
 * machine keeps it, and the node's own seat (if it holds one) compares it with its own. (The
 * node's own seat's VIEW, sent to itself, is for the dealer machine only.)
 */
export function isAlsoForSeat (type: string, from: string, dealer: string, self: string): boolean {
  return type === 'view' && self === dealer && from !== self
}

const BLIND_SEAT_DOCS: ReadonlySet<string> = new Set(['bkey', 'bshuffle', 'bshares', 'bsecret'])
