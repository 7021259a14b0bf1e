import * as z from 'zod'
import { ROBOT } from './hand/messages.js'
import { CoreInputError } from './errors.js'
import { defaultThreshold, GROUP_ID } from './beacon/group-params.js'
import { finalGroupBodySchema, groupJoinRequestSchema, type FinalGroupBody } from './beacon/group-join.js'

/**
 * A table whose own nodes are its beacon group (docs/beacon-group.md, "A table's own group"):
 * `table new --beacon own` puts in the table block, instead of a chain,
 *
 *   "beacon": { "group": "<the table's id>", "threshold": T, "period": S }
 *
 * and every member (the dealer, then each human seat in seat order) is a member of group <id>.
 * Each seat says, when it joins by its link, where the group reaches it (`group: {addrs, url}` in
 * its join request); once every seat is taken the dealer's final table carries the final group
 * (`group`: the `beacon-group/group` body, signed with the table), which every node turns into the
 * `group` block of its config. The group's chain exists only after its DKG: each node takes it from
 * its own group member then, and its table deals nothing before. Pure: schemas and checks.
 */

/** The own-group beacon of a table block. */
export const ownGroupBeaconSchema = z.object({
  /** The group's id: the table's own id. */
  group: z.string().regex(GROUP_ID, 'must be 1 to 64 letters, digits or . _ : -'),
  /** Members whose partial signatures make a round (default floor(n/2) + 1). */
  threshold: z.number().int().min(2).max(64),
  /** Seconds between rounds. */
  period: z.number().int().min(1).max(3600)
}).strict()
export type OwnGroupBeacon = z.infer<typeof ownGroupBeaconSchema>

/** Where the group reaches one member: its announced libp2p addresses and its drand HTTP API. */
export const ownGroupMemberSchema = z.object({
  addrs: groupJoinRequestSchema.shape.addrs,
  url: groupJoinRequestSchema.shape.url.unwrap()
}).strict()
export type OwnGroupMember = z.infer<typeof ownGroupMemberSchema>

/**
 * A table block's beacon when it is the table's own group (an object with a `group` field),
 * checked; undefined for any other beacon. A malformed one is a CoreInputError naming the field.
 */
export function ownGroupBeaconOf (beacon: unknown): OwnGroupBeacon | undefined {
  if (typeof beacon !== 'object' || beacon === null || !('group' in beacon)) return undefined
  const parsed = ownGroupBeaconSchema.safeParse(beacon)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new CoreInputError(`the table's own group: ${issue.path.join('.') || '(root)'}: ${issue.message}`)
  }
  return parsed.data
}

/** The table's nodes as its group lists them: the dealer first, then each human seat's node in seat order, once each. */
export function ownGroupMembers (table: { dealer: string, seats: ReadonlyArray<string | null> }): string[] {
  const out = [table.dealer]
  for (const s of table.seats) if (s !== null && s !== ROBOT && !out.includes(s)) out.push(s)
  return out
}

/** The number of nodes a table has, its dealer and each human seat (taken or not, the dealer's own seat once): its own group's size. */
export function ownGroupSize (table: { dealer: string, seats: ReadonlyArray<string | null> }): number {
  return 1 + table.seats.filter(s => s !== ROBOT && s !== table.dealer).length
}

/** The default threshold of a table's own group of n nodes: floor(n/2) + 1. */
export function ownGroupThreshold (n: number): number {
  return defaultThreshold(n)
}

/**
 * Whether a time-locked hand of a table on its own t-of-n group can still be finished once its
 * dealer (one member) is gone: the n − 1 others must still make the round (n − 1 ≥ t).
 */
export function recoverableWithoutDealer (n: number, t: number): boolean {
  return n - 1 >= t
}

/**
 * The final group of a table whose every seat is taken: the dealer (member 1) and each human seat
 * in seat order, at the addresses and URL each gave; the DKG at `start`, round 1 one phase later.
 */
export function finalOwnGroup (options: {
  table: { id: string, dealer: string, seats: ReadonlyArray<string | null> }
  beacon: OwnGroupBeacon
  /** Peer id → where the group reaches it, for every member. */
  members: ReadonlyMap<string, OwnGroupMember>
  start: number
  phaseMs: number
}): FinalGroupBody {
  const { beacon } = options
  const peers = ownGroupMembers(options.table)
  return finalGroupBodySchema.parse({
    id: beacon.group,
    members: peers.map(peer => {
      const m = options.members.get(peer)
      if (m === undefined) throw new CoreInputError(`the table's own group has no address for member ${peer}`)
      return { peer, addrs: m.addrs, url: m.url }
    }),
    threshold: beacon.threshold,
    period: beacon.period,
    genesisTime: Math.ceil((options.start + options.phaseMs) / 1000),
    dkg: { start: options.start, phaseMs: options.phaseMs }
  })
}

/**
 * A table's own group as a node accepts it (the final table's `group`, or a config's `group`
 * block): the group the table's beacon names (id, threshold, period), its members exactly the
 * table's nodes in order (ownGroupMembers), each with a URL (the table's relays). `self` and
 * `mine`: this node, where it said the group reaches it. The reason otherwise.
 */
export function checkOwnGroup (group: unknown, table: { id: string, dealer: string, seats: ReadonlyArray<string | null>, beacon: unknown }, self?: string, mine?: OwnGroupMember): string | undefined {
  let beacon
  try { beacon = ownGroupBeaconOf(table.beacon) } catch (err) { return (err as Error).message }
  if (beacon === undefined) return `table ${table.id}'s beacon is not its own group`
  const parsed = finalGroupBodySchema.safeParse(group)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    return `the group is malformed: ${issue.path.join('.') || '(root)'}: ${issue.message}`
  }
  const g = parsed.data
  if (g.id !== beacon.group) return `the group is ${g.id}, not ${beacon.group}, the one the table's beacon names`
  if (g.threshold !== beacon.threshold || g.period !== beacon.period) {
    return `the group is ${g.threshold} of ${g.members.length} with a round every ${g.period} s, not the threshold ${beacon.threshold} and period ${beacon.period} s the table's beacon names`
  }
  const expected = ownGroupMembers(table)
  const peers = g.members.map(m => m.peer)
  if (JSON.stringify(peers) !== JSON.stringify(expected)) return `the group's members (${peers.join(', ')}) are not the table's nodes, the dealer then each seat in order (${expected.join(', ')})`
  const noUrl = g.members.find(m => m.url === undefined)
  if (noUrl !== undefined) return `member ${noUrl.peer} of the group has no drand API URL (the table takes its rounds from the members' URLs)`
  if (g.genesisTime * 1000 < g.dkg.start) return 'the group\'s round 1 is due before its DKG starts'
  if (self !== undefined && mine !== undefined) {
    const me = g.members.find(m => m.peer === self)
    if (me === undefined) return `the group does not have this node (${self}) as a member`
    if (JSON.stringify(me.addrs) !== JSON.stringify(mine.addrs) || me.url !== mine.url) {
      return `the group lists this node at ${me.addrs.join(', ')} (${String(me.url)}), not at ${mine.addrs.join(', ')} (${mine.url}): join again with the --group-listen, --group-announce and --group-url of the first time`
    }
  }
  return undefined
}
