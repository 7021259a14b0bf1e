/** The game engines by id (docs/games.md). Tarot, blackjack and dice are added by their own modules. */
import { belote } from './belote.js'
import { coinche } from './coinche.js'
import { duo } from './duo.js'
import type { GameEngine } from './types.js'

export const engines: Record<string, GameEngine<any, any>> = { coinche, belote, duo }
