import type { AcksDue, LateAck } from './types.js'

/**
 * The one rule for a late ack (docs/log.md, "Late acks"): an ACK that comes after its receipt,
 * checked against that incomplete receipt's missing acks exactly as rule 11 of docs/protocol.md §9
 * checks an ack. `late` holds the seats (as string keys) whose late ack was already taken. Used by
 * the log verifier (chain.ts), the dealer that takes a late ACK and the seat that logs one. Returns
 * every problem found, each with its code; empty means the ack completes that seat.
 */
export function lateAckProblems (due: AcksDue, late: ReadonlySet<string>, ack: LateAck, where = 'the receipt'): Array<{ code: string, message: string }> {
  const problems: Array<{ code: string, message: string }> = []
  const add = (code: string, message: string): void => { problems.push({ code, message }) }
  const what = `late ack of seat ${ack.seat}`
  const key = String(ack.seat)
  const expected = Object.hasOwn(due.seats, key) ? due.seats[key] : undefined
  if (ack.commit !== due.commit) add('late-ack-unmatched', `${what}: answers another COMMIT than ${where}'s`)
  if (late.has(key)) add('late-ack-acked', `${what}: an earlier late ack already countersigns seat ${ack.seat}'s cards (${where})`)
  else if (expected === undefined) add('late-ack-acked', `${what}: ${where} already holds seat ${ack.seat}'s countersignature, or the seat is not a human seat`)
  if (expected !== undefined && ack.signer !== expected.signer) add('wrong-signer', `${what}: not signed by that seat`)
  if (ack.table !== due.table || ack.hand !== due.hand) add('other-hand', `${what}: names another table or hand`)
  if (ack.reveal !== due.reveal) add('ack-reveal', `${what}: countersigns another reveal than ${where}'s`)
  if (expected !== undefined && ack.cards !== expected.cards) add('ack-cards', `${what}: the cards it held are not that seat's cards of this deck`)
  return problems
}
