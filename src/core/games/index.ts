/** The game engines by id (docs/games.md). */
import { belote } from './belote.js'
import { blackjack } from './blackjack.js'
import { coinche } from './coinche.js'
import { dice } from './dice.js'
import { duo } from './duo.js'
import { tarot } from './tarot.js'
import type { GameEngine } from './types.js'

export const engines: Record<string, GameEngine<any, any>> = { coinche, belote, duo, tarot, blackjack, dice }
