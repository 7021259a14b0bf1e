import { familyOfScheme } from '../core/schemes/registry.js'
import type { HandFamily } from '../core/hand/family.js'
import type { DealerSide, SeatSide } from './contracts.js'
import type { MachineInit } from './types.js'
import { dealerHandKey } from './dealer.js'
import { seatHandKey } from './seat.js'
import { PlayingDealer, PlayingSeat } from './play.js'
import { blindDealerHandKey } from './blind-dealer.js'
import { blindSeatHandKey } from './blind-seat.js'

/** One hand family's machines, and the keys their hands are saved under (unchanged since each family landed). */
export interface MachineFamily {
  dealer: (init: MachineInit) => DealerSide
  seat: (init: MachineInit) => SeatSide
  dealerHandKey: (table: string, hand: number) => string
  seatHandKey: (table: string, hand: number) => string
}

/** The registry: each hand family's dealer and seat machines. */
export const MACHINES: Readonly<Record<HandFamily, MachineFamily>> = Object.freeze({
  // Commit–reveal hands may be played (src/protocol/play.ts wraps the machines).
  'commit-reveal': { dealer: init => new PlayingDealer(init), seat: init => new PlayingSeat({ ...init, autoplay: init.timeouts.playMs === undefined }), dealerHandKey, seatHandKey },
  // So may blind ones: each card is opened as it is played (docs/dealer-blind.md §15).
  blind: { dealer: init => new PlayingDealer(init), seat: init => new PlayingSeat({ ...init, autoplay: init.timeouts.playMs === undefined }), dealerHandKey: blindDealerHandKey, seatHandKey: blindSeatHandKey }
})

/** The machines of the family a table's scheme names; an unknown scheme is refused. */
export function machinesFor (scheme: string): MachineFamily {
  const family = familyOfScheme(scheme)
  if (family === undefined) throw new Error(`unknown scheme ${JSON.stringify(scheme)}`)
  return MACHINES[family]
}

/** Every key a family's hands of `table` are saved under starts with this (the hand number follows, 16 digits). */
export function handKeyPrefix (key: (table: string, hand: number) => string, table: string): string {
  return key(table, 0).slice(0, -16)
}
