const SUITS: Record<string, string> = { C: '♣', D: '♦', H: '♥', S: '♠' }
const RANKS: Record<string, string> = { T: '10', J: 'J', C: 'C', Q: 'Q', K: 'K', A: 'A' }

/**
 * A card code for humans: 'TC' → '10♣', 'CS' (tarot Cavalier) → 'C♠', 'T07' → 'T7' (trump 7),
 * 'EXC' → 'Exc'. Unknown codes come back unchanged: display must never throw.
 */
export function cardLabel (code: string): string {
  if (code === 'EXC') return 'Exc'
  if (/^T(0[1-9]|1[0-9]|2[01])$/.test(code)) return `T${Number(code.slice(1))}`
  if (code.length === 2 && code[1] in SUITS) return (RANKS[code[0]] ?? code[0]) + SUITS[code[1]]
  return code
}
