/**
 * Stages the dealer delivers as soon as the key is known. Every other stage (belote's take, duo's
 * face-up packets, tarot's dog) waits for the table to ask for it, because the game decides when.
 */
export const INITIAL_STAGES: ReadonlySet<string> = new Set(['deal', 'turnUp'])
