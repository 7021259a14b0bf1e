import { cardElement } from './cards.js'
import { el } from './dom.js'
import { actionWords } from '../core/games/play-words.js'
import type { PlayView } from '../protocol/contracts.js'

/**
 * A played hand drawn as a card table (docs/games.md "Playing on the page"): whose turn it is, the
 * bids, the trick on the table, this seat's cards as buttons and its legal bids as buttons. What is
 * legal comes from the seat's own engine (`PlayView.legal`, the list `hand show` prints and the node
 * checks every action against), so an illegal card is a disabled button here and a refusal there:
 * one rule. The same drawing serves the node's table page and the seat page.
 */

/** A card action names `card`; tarot's écart names `cards`. */
function cardsOf (action: unknown): string[] {
  const a = action as { card?: unknown, cards?: unknown }
  return [a.card, ...(Array.isArray(a.cards) ? a.cards : [])].filter((c): c is string => typeof c === 'string')
}

/** A card played into a trick: coinche, belote and duo's `card`, tarot's `play`. */
const isCardPlay = (action: unknown): boolean => ['card', 'play'].includes((action as { type?: unknown }).type as string)

export interface PlayTableInput {
  view: PlayView
  /** Every card this seat was dealt or shown as its own (private stages, its face-up cards). */
  own: readonly string[]
  /** Seats at the table (a trick has one card from each). */
  seats: number
  /** The hand's score line, once over (the `played` event). */
  result?: string
  /** Sends this seat's action; a refusal comes back as the thrown error's message. */
  act: (action: unknown) => Promise<void>
}

export function playTable ({ view, own, seats, result, act }: PlayTableInput): HTMLElement {
  const box = el('div', 'play-table')
  box.dataset.testid = 'play'
  // How far along the chain this drawing is (a test or a script waits for the page to catch up).
  box.dataset.actions = String(view.actions.length)
  const mine = view.toAct === view.seat && !view.over
  const turn = el('p', 'facts', view.over
    ? 'the hand is over: the dealer reveals it'
    : view.toAct === null ? 'waiting for the dealer' : mine ? 'your turn' : `seat ${view.toAct} to act`)
  turn.dataset.testid = 'turn'
  turn.dataset.toAct = view.toAct === null ? '' : String(view.toAct)
  if (mine && view.robotAt !== undefined) turn.title = `your robot plays at ${new Date(view.robotAt).toLocaleTimeString()} if you do not`
  box.append(turn)

  const note = el('p', 'hint')
  note.dataset.testid = 'play-status'
  const send = (action: unknown, buttons: HTMLElement): void => {
    for (const b of buttons.querySelectorAll('button')) b.disabled = true
    act(action).then(() => { note.textContent = actionWords(action) }, (err: unknown) => { note.textContent = `refused: ${(err as Error).message}` })
  }

  // The bids: every action that is not a card played nor a dealer's stage, in order.
  const bids = el('div', 'bids')
  bids.dataset.testid = 'bids'
  const said = view.actions.filter(a => a.seat >= 0 && !isCardPlay(a.action))
  bids.append(el('span', 'stage-name', 'bids'), el('span', undefined, said.length === 0 ? 'none yet' : said.map(a => `seat ${a.seat} ${actionWords(a.action)}`).join(' · ')))
  const legalBids = view.legal.filter(a => !isCardPlay(a))
  if (mine && legalBids.length > 0) {
    const row = el('p', 'bid-buttons')
    for (const a of legalBids) {
      const b = el('button', undefined, actionWords(a)) as HTMLButtonElement
      b.type = 'button'
      b.dataset.action = JSON.stringify(a)
      b.addEventListener('click', () => { send(a, box) })
      row.append(b)
    }
    bids.append(row)
  }
  box.append(bids)

  const score = el('p', 'facts', result !== undefined ? `score: ${result}` : `tricks played: ${view.tricks}`)
  score.dataset.testid = 'score'
  // Over: the score says it all (the last view drawn may predate the last card).
  if (view.over) {
    box.append(score, note)
    return box
  }

  // The trick on the table: the cards played since the last complete trick.
  const plays = view.actions.filter(a => isCardPlay(a.action))
  const current = plays.slice(view.tricks * seats)
  const trick = el('div', 'trick')
  trick.dataset.testid = 'trick'
  trick.append(el('span', 'stage-name', `trick ${view.tricks + (current.length > 0 || !view.over ? 1 : 0)}`))
  for (const p of current) {
    const c = el('span', 'played')
    c.append(el('span', 'hint', `seat ${p.seat} `), cardElement(cardsOf(p.action)[0] ?? '??'))
    trick.append(c)
  }
  box.append(trick)

  // This seat's cards: what it was given, less what it has played or put aside; a card is a button,
  // enabled only when playing it is legal now.
  const gone = new Set(view.actions.filter(a => a.seat === view.seat).flatMap(a => cardsOf(a.action)))
  const legalCards = new Map<string, unknown>()
  for (const a of view.legal) if (isCardPlay(a)) for (const c of cardsOf(a)) legalCards.set(c, a)
  const holding = [...new Set([...own.filter(c => !gone.has(c)), ...legalCards.keys()])]
  const hand = el('div', 'hand-cards')
  hand.dataset.testid = 'hand-cards'
  for (const code of holding) {
    const b = el('button', 'card-button') as HTMLButtonElement
    b.type = 'button'
    b.dataset.card = code
    b.append(cardElement(code))
    const action = legalCards.get(code)
    b.disabled = !mine || action === undefined
    b.title = b.disabled ? (mine ? `${code} may not be played now` : 'not your turn') : `play ${code}`
    if (action !== undefined) b.addEventListener('click', () => { send(action, box) })
    hand.append(b)
  }
  box.append(hand)

  box.append(score, note)
  return box
}
