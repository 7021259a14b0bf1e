/**
 * A player's words for an action (docs/games.md "Playing from the terminal"): what `fairdeal hand
 * bid` and `hand play` send, and how `hand show` writes an action. Pure.
 */

/** A card played: tarot's action is `play`, the 32-card games' `card`. */
export function cardAction (game: string, card: string): { type: string, card: string } {
  return { type: game === 'tarot' ? 'play' : 'card', card: card.toUpperCase() }
}

/**
 * A bid in words: `pass` everywhere; coinche and duo `80H` or `80 H` (value then suit S H D C),
 * `capot S`, `generale S`, `coinche`, `surcoinche`; belote `take` (first round) or `take S`;
 * tarot `petite`, `garde`, `garde-sans`, `garde-contre`. Throws (with the forms) for anything else.
 */
export function parseBid (game: string, words: readonly string[]): Record<string, unknown> {
  const text = words.join(' ').trim().toLowerCase()
  if (text === 'pass') return { type: 'pass' }
  if (game === 'tarot') {
    if (['petite', 'garde', 'garde-sans', 'garde-contre'].includes(text)) return { type: 'bid', bid: text }
    throw new Error(`a tarot bid is pass, petite, garde, garde-sans or garde-contre, not ${JSON.stringify(text)}`)
  }
  if (game === 'belote') {
    const m = /^take(?:\s+([shdc]))?$/.exec(text)
    if (m !== null) return m[1] === undefined ? { type: 'take' } : { type: 'take', suit: m[1].toUpperCase() }
    throw new Error(`a belote bid is pass, take, or take S|H|D|C (second round), not ${JSON.stringify(text)}`)
  }
  if (text === 'coinche' || text === 'surcoinche') return { type: text }
  const m = /^(\d{2,3}|capot|generale)\s*([shdc])$/.exec(text)
  if (m !== null) return { type: 'bid', value: /^\d/.test(m[1]) ? Number(m[1]) : m[1], suit: m[2].toUpperCase() }
  throw new Error(`a ${game} bid is pass, coinche, surcoinche, or a value and a suit (80H, 100 S, capot D), not ${JSON.stringify(text)}`)
}

/** One line for an action of the chain, as `hand show` prints it. */
export function actionWords (action: unknown): string {
  const a = action as Record<string, unknown>
  switch (a.type) {
    case 'bid': return a.bid !== undefined ? String(a.bid) : `bid ${String(a.value)} ${String(a.suit)}`
    case 'card': case 'play': return `plays ${String(a.card)}`
    case 'take': return a.suit === undefined ? 'takes' : `takes at ${String(a.suit)}`
    case 'stage': return `${String(a.stage)} ${JSON.stringify(a.inputs)}: ${Object.values(a.cards as Record<string, string[]>).flat().join(' ')}`
    default: return Object.entries(a).map(([k, v]) => (k === 'type' ? String(v) : `${k} ${Array.isArray(v) ? v.join(' ') : String(v)}`)).join(' ')
  }
}
