/**
 * Playing a commit–reveal hand at the table (docs/games.md "Playing a dealt hand"). A hand whose
 * COMMIT says `params.play` is played once it is dealt: each bid, card or declaration is a signed
 * `game-action` document (src/core/games/action-chain.ts) carried in a PLAY message. A seat sends
 * its actions to the dealer; the dealer's node, which knows the deal, checks each against the
 * seat's cards and the rules, and passes it to every other seat, which checks it on its own view
 * (src/core/games/play-view.ts). The dealer delivers the stages the game asks for (belote's take,
 * duo's face-up packets, tarot's dog), plays the robot seats with randomness drawn from the hand's
 * key, and reveals the hand when the game says it is over; the receipt carries the chain and the
 * score. Wrappers around the commit–reveal machines, pure like them: documents in, effects out.
 */
export { PlayingDealer } from './play-dealer.js'
export { PlayingSeat, type PlayingSeatInit } from './play-seat.js'
