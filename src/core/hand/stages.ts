/**
 * Stages the dealer delivers as soon as the key is known, in the game's order. Every other stage
 * (belote's take, duo's face-up packets, tarot's dog) waits for the table to ask for it, because the
 * game decides when. A REVEAL lists the initial stages of its game first (docs/protocol.md §9).
 */
export const INITIAL_STAGES: ReadonlySet<string> = new Set(['deal', 'turnUp'])
