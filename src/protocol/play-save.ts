/**
 * A played hand's save (docs/games.md "A restart in the middle of play"): a node keeps what its
 * hand in play has done (PlayHand.history: the stages delivered and the actions taken, in order)
 * and its start (the setup), under the hand's own key plus `/play`, so that the machines' hand
 * snapshots and these records are read back together (one key range) and a restart rebuilds the
 * hand exactly (PlayHand.replay). Written before anything that follows a step goes out, removed
 * with the hand.
 */
import type { ActionDoc } from '../core/games/action-chain.js'
import type { PlayStep } from '../core/games/play-hand.js'
import type { GameSetup } from '../core/games/types.js'
import type { Effect } from './types.js'

export interface PlaySave {
  /** Marks the record among the hand snapshots of the same key range. */
  play: 1
  hand: number
  setup: GameSetup
  history: PlayStep[]
  /** The dealer's: the game's end went out (or a refused action ended the hand). */
  ended?: boolean
  /** The dealer's: the refused action that ended the hand. */
  refused?: ActionDoc
  /** The dealer's: the human seat whose turn ran out, which ended the hand. */
  waiting?: number
}

export const playSaveKey = (handKey: string): string => `${handKey}/play`

export function isPlaySave (v: unknown): v is PlaySave {
  return typeof v === 'object' && v !== null && (v as { play?: unknown }).play === 1 && Array.isArray((v as { history?: unknown }).history)
}

/** The records and the machine's own snapshots of one key range, apart. */
export function splitPlaySaves<T> (snapshots: readonly unknown[]): { saves: Map<number, PlaySave>, others: T[] } {
  const saves = new Map<number, PlaySave>()
  const others: T[] = []
  for (const s of snapshots) {
    if (isPlaySave(s)) saves.set(s.hand, s)
    else others.push(s as T)
  }
  return { saves, others }
}

export const dropPlaySave = (handKey: string): Effect => ({ kind: 'persist', key: playSaveKey(handKey), value: null })
