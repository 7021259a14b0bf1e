/**
 * The table page's view of a game that draws during the hand (docs/games.md "Draws on the chain"):
 * blackjack's shoe cards and the dice table's rolls, each as it comes, from the node's `action`
 * events. A draw is the dealer's stage action (seat −1); the seats' own actions (hit, stand, a roll
 * asked for) are shown between them. Pure text: the page renders the lines.
 */
import { DRAW_GAMES } from '../../core/games/play-draws.js'

/** The table's game draws during the hand (`shoe`: blackjack from bitjack21's shoe; `dice`). */
export const drawsDuringHand = (game: string): boolean => DRAW_GAMES.has(game)

interface Stage { type: 'stage', stage: string, inputs: Record<string, number> | null, cards: Record<string, string[]> }

const isStage = (a: unknown): a is Stage => typeof a === 'object' && a !== null && (a as { type?: unknown }).type === 'stage'

const who = (seat: number | undefined): string => seat === undefined || seat < 0 ? 'the bank' : `box ${seat}`

/** One line for action `n` of the hand, by `seat` (−1: the dealer's draw). */
export function drawLine (game: string, n: number, seat: number, action: unknown): string {
  if (isStage(action)) {
    const i = action.inputs ?? {}
    const card = action.cards.card?.[0]
    switch (action.stage) {
      case 'draw': return card === undefined ? `draw #${i.n}: ${who(i.seat)}, face down` : `draw #${i.n}: ${who(i.seat)} ${card}`
      case 'peek': return action.cards.blackjack?.[0] === '1' ? `the bank looks at its hole card: blackjack, ${card ?? '?'}` : 'the bank looks at its hole card: no blackjack'
      case 'turn': return `the bank turns its hole card: ${card ?? '?'}`
      case 'roll': return `roll #${action.cards.n?.[0] ?? i.n} for seat ${i.seat}: ${(action.cards.dice ?? []).join(' + ')} = ${(action.cards.dice ?? []).reduce((a, d) => a + Number(d), 0)}`
      case 'reveal': return 'the series is over: its key is shown, so anyone recomputes every roll'
      default: return `${action.stage} (action ${n})`
    }
  }
  const a = action as { type?: string, expression?: string }
  if (game === 'dice' && a.type === 'roll') return `seat ${seat} asks for ${a.expression ?? 'a roll'}`
  return `${game === 'shoe' ? `box ${seat}` : `seat ${seat}`}: ${a.type ?? JSON.stringify(action)}`
}
