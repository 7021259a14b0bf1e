import { cardLabel } from '../core/schemes/labels.js'

/** Suit of a card code ('TD' → 'D'); tarot trumps and the excuse have none. */
function suitOf (code: string): string | undefined {
  return code.length === 2 && 'CDHS'.includes(code[1]) ? code[1] : undefined
}

/**
 * One card as a small face: rank and suit symbol, hearts and diamonds in red. The card's code
 * (`AS`, `TD`, `7H`) is its `data-card` attribute, so a test can read the exact cards shown.
 */
export function cardElement (code: string): HTMLElement {
  const el = document.createElement('span')
  const suit = suitOf(code)
  el.className = `card${suit === 'D' || suit === 'H' ? ' red' : ''}${suit === undefined ? ' trump' : ''}`
  el.dataset.card = code
  el.textContent = cardLabel(code)
  el.title = code
  return el
}

/** A row of cards; its text content is the codes separated by spaces (`AS TD 7H`) when `codes` is set. */
export function cardRow (codes: readonly string[]): HTMLElement {
  const row = document.createElement('span')
  row.className = 'cards'
  for (const c of codes) row.append(cardElement(c))
  return row
}
