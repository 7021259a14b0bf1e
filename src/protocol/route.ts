/**
 * Which machine of a node a document is for. A dealer node may also hold a seat, so both machines
 * can live behind one peer id: seats' answers go to the dealer machine, the dealer's messages to the
 * seat machine.
 */
export function isForDealer (type: string, from: string, dealer: string): boolean {
  if (type === 'pledge' || type === 'nonce' || type === 'ack' || type === 'ask') return true
  if (type === 'abort') return from !== dealer
  return false
}
