/**
 * A played hand's receipt (docs/games.md "Verifying a played hand"): its action chain replayed
 * against the revealed deal with the game's engine, from the first action to the last, and its
 * score compared with the replayed one. Each broken rule is a problem with its reason code.
 */
import { canonicalJson } from '../canonical.js'
import { actionDigest, applyAction, checkLink, CHAIN_START, DEALER_SEAT, replayChain, type ActionBody, type ActionDoc, type ChainContext } from '../games/action-chain.js'
import { engines } from '../games/index.js'
import { PLAYED_CARD_GAMES, setupFromDeliveries, stageCards } from '../games/play-setup.js'
import { checkDraw, DRAW_GAMES, drawSetup, engineIdOf } from '../games/play-draws.js'
import type { Delivery } from '../schemes/types.js'
import type { Signed } from '../signed.js'
import { problem, Reason, type Problem } from './reasons.js'
import { docDigest } from './digest.js'
import { ROBOT, type Receipt } from './messages.js'

/** What the summary says of a played hand. */
export interface PlaySummary {
  actions: number
  tricks: number
  /** The replayed score, or null when the chain stops before the hand's end. */
  score: { points: number[], summary: string, detail: Record<string, unknown> } | null
  /** The action that ended the hand because the rules refuse it: its seat, its number, the rule (the seat is to blame). */
  refused?: { seat: number, n: number, rule: string, reason: string }
  /** The seat whose turn ran out, which ended the hand (the dealer's word, countersigned by the seats that acked). */
  waiting?: { seat: number }
}

/** The peer id that signs each seat's actions: the seat's own, the dealer's for a robot seat. */
export function actionSigners (seats: readonly string[], dealer: string): string[] {
  return seats.map(s => (s === ROBOT ? dealer : s))
}

/** What checkPlay reads of a receipt (a version-1 or a blind version-2 one). */
export interface PlayedReceipt {
  commit: Receipt['commit']
  reveal: { body: { stages: string[], play?: { actions: number, head: string } } }
  play?: Receipt['play']
}

/**
 * Replays `receipt.play` on `deliveries` (the recomputed deal's, every stage of it: a stage the
 * hand asks for must also be one the reveal lists). Returns the problems and, when the chain
 * replays, what the summary says of it. A blind-v1 receipt passes its opening rule (`checkOpening`,
 * src/core/hand/blind-play.ts): its cards' openings are checked as the chain replays.
 */
export function checkPlay (receipt: PlayedReceipt, deliveries: readonly Delivery[], key: string, verify?: (doc: Signed<unknown>) => boolean, checkOpening?: ChainContext['checkOpening']): { problems: Problem[], summary?: PlaySummary } {
  const commit = receipt.commit.body
  const play = receipt.play
  if (commit.params.play !== true) {
    return { problems: play === undefined ? [] : [problem(Reason.PLAY_MISSING, 'play: the receipt carries actions of a hand not committed as played')] }
  }
  if (play === undefined) return { problems: [problem(Reason.PLAY_MISSING, 'play: the hand was committed as played and the receipt carries no actions')] }
  // The chain is the one the REVEAL names, which every seat's ACK countersigns.
  const named = receipt.reveal.body.play
  if (named === undefined) return { problems: [problem(Reason.PLAY_MISSING, 'play: the reveal of a played hand names no action chain')] }
  const last = play.actions.at(-1)
  const head = last === undefined ? CHAIN_START : actionDigest(last as ActionDoc)
  if (named.actions !== play.actions.length || named.head !== head) {
    return { problems: [problem(Reason.PLAY_CHAIN, `play: the receipt's chain (${play.actions.length} actions) is not the one the reveal names (${named.actions} actions, last ${named.head.slice(0, 12)}…)`)] }
  }
  const draws = DRAW_GAMES.has(commit.game)
  const engine = engines[engineIdOf(commit.game)]
  if (engine === undefined || (!draws && !PLAYED_CARD_GAMES.has(commit.game))) return { problems: [problem(Reason.PLAY_MISSING, `play: ${commit.game} is not played at a table`)] }
  const stages = receipt.reveal.body.stages
  const setup = draws ? drawSetup(commit.game, commit.seats.length) : setupFromDeliveries(commit.game, commit.seats.length, commit.params.dealer, deliveries.filter(d => stages.includes(d.stage)))
  const r = replayChain(engine, setup, play.actions, {
    hand: docDigest(receipt.commit),
    seatSigners: actionSigners(commit.seats, commit.dealer),
    dealer: commit.dealer,
    // Card games: the stages come from the deal, if the reveal lists them; draw games: each draw is
    // the dealer's stage action, recomputed from the key and its number.
    stage: request => (!draws && stages.includes(request.stage) ? stageCards(deliveries, request) : null),
    ...(draws ? { checkStage: checkDraw(commit.game, key) } : {}),
    complete: play.score !== null,
    ...(verify === undefined ? {} : { verify }),
    ...(checkOpening === undefined ? {} : { checkOpening })
  })
  if (!r.ok) {
    const where = `play: action ${r.index + 1}`
    if (r.code === 'chain-draw') return { problems: [problem(Reason.PLAY_DRAW, `${where}: ${r.rule ?? ''}: ${r.reason}`)] }
    if (r.code === 'chain-illegal-action') {
      const code = r.rule === 'card-not-held' ? Reason.PLAY_NOT_HELD : Reason.PLAY_ILLEGAL
      return { problems: [problem(code, `${where}: ${r.rule ?? ''}: ${r.reason}`)] }
    }
    if (r.code === 'chain-opening') return { problems: [problem(Reason.PLAY_OPENING, `${where}: ${r.rule ?? ''}: ${r.reason}`)] }
    if (r.code === 'chain-not-over') return { problems: [problem(Reason.PLAY_SCORE, `play: a score is given and the chain ends before the hand does (${play.actions.length} actions)`)] }
    return { problems: [problem(Reason.PLAY_CHAIN, `${where}: ${r.code}: ${r.reason}`)] }
  }
  const tricks = (r.state as { tricks?: unknown[], play?: { tricks?: unknown[] } | null })
  const summary: PlaySummary = { actions: play.actions.length, tricks: tricks.tricks?.length ?? tricks.play?.tricks?.length ?? 0, score: null }
  if (play.waiting !== undefined) {
    // The seat named is the one the replayed chain waits for: a human seat's turn, the hand not over.
    const wrong = (m: string): { problems: Problem[], summary: PlaySummary } => ({ problems: [problem(Reason.PLAY_WAITING, `play: the seat waited for ${m}`)], summary })
    const seat = play.waiting.seat
    if (play.score !== null || play.refused !== undefined) return wrong('comes with a score or a refused action: a hand ended by a turn that ran out has neither')
    if (engine.isOver(r.state)) return wrong(`(seat ${seat}) is named on a hand the chain finishes`)
    if (engine.pendingStage(r.state) !== null) return wrong(`(seat ${seat}) is named while the hand waits for the dealer's stage`)
    if (engine.toAct(r.state) !== seat) return wrong(`(seat ${seat}) is not the seat to act after action ${play.actions.length} (seat ${String(engine.toAct(r.state))} is)`)
    if (commit.seats[seat] === undefined || commit.seats[seat] === ROBOT) return wrong(`(seat ${seat}) is no human seat of the table (a robot is played by the dealer)`)
    summary.waiting = { seat }
    return { problems: [], summary }
  }
  if (play.refused !== undefined) {
    // The refused action must be the chain's next link, signed by its seat, and one the rules refuse.
    const ctx = { hand: docDigest(receipt.commit), seatSigners: actionSigners(commit.seats, commit.dealer), dealer: commit.dealer }
    const wrong = (m: string): { problems: Problem[], summary: PlaySummary } => ({ problems: [problem(Reason.PLAY_REFUSED, `play: the refused action ${m}`)], summary })
    if (play.score !== null) return wrong('comes with a score: a hand ended by a refused action has none')
    const link = checkLink(play.refused, play.actions.length, r.head ?? CHAIN_START, ctx, verify)
    if (link !== null) return wrong(`is not the chain's next link (${link.code}: ${link.reason})`)
    const b = play.refused.body
    if (b.seat === DEALER_SEAT) return wrong('is the dealer\'s own')
    const step = applyAction(engine, r.state, b as ActionBody, checkOpening === undefined ? {} : { checkOpening }, play.actions as ActionDoc[])
    if (step.ok || (step.code !== 'chain-illegal-action' && step.code !== 'chain-opening')) return wrong(`is legal at that point${step.ok ? '' : ` (${step.code}: ${step.reason})`}`)
    summary.refused = { seat: b.seat, n: b.n, rule: step.rule ?? '', reason: step.reason }
    return { problems: [], summary }
  }
  if (!engine.isOver(r.state)) return { problems: [], summary }
  const score = engine.score(r.state)
  summary.score = score
  if (play.score === null) return { problems: [problem(Reason.PLAY_SCORE, 'play: the chain finishes the hand and the receipt gives no score')], summary }
  if (canonicalJson({ points: score.points, summary: score.summary }) !== canonicalJson(play.score)) {
    return { problems: [problem(Reason.PLAY_SCORE, `play: the receipt's score (${play.score.points.join(' ')}) is not the replayed hand's (${score.points.join(' ')})`)], summary }
  }
  return { problems: [], summary }
}
