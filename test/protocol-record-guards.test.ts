// The seat and dealer machines sign only records the rules accept, and take only records that are
// about their own table and hand (issue 18; found by an audit of docs/protocol.md §10 against the
// machines). In memory, real wire encoding.
import { describe, expect, it } from 'vitest'
import { memoryTable } from './helpers/memory-table.js'
import { signDocument, type Signed } from '../src/core/signed.js'
import { signAbort } from '../src/protocol/abort.js'
import { signerFromSeed } from '../src/core/identity.js'
import { MachineFailure } from '../src/protocol/types.js'
import { localBeaconSecretKey, localChainInfo, parseChainInfo, signLocalRound, type ChainInfo } from '../src/core/beacon/index.js'
import type { CommitBody, PledgesBody, SignedCommit, SignedPledge } from '../src/core/hand/messages.js'

describe('records the machines sign or take', () => {
  it('a PLEDGES holding a pledge its seat signed for another table is refused, not recorded as equivocation (the rule finds no conflict in it)', () => {
    const t = memoryTable({ timeouts: { contributeMs: 5_000 } })
    const victim = t.signers[2].peerId
    t.intercept = (_from, to, doc) => {
      if (doc.type !== 'pledges' || to !== victim) return doc
      const p = doc as Signed<PledgesBody>
      const pledges = p.body.pledges.map(pl => pl.body.seat !== 3 ? pl : signDocument('pledge', { ...pl.body, table: 'other-table', commit: 'ab'.repeat(32) }, t.signers[3]) as SignedPledge)
      return signDocument('pledges', { ...p.body, pledges }, t.signers[0])
    }
    t.run(t.table.dealer, t.dealer.startHand({ dealer: 0 }).effects)
    expect((t.appended.get(victim) ?? []).filter(e => e.entry === 'abort')).toEqual([])
    expect(t.rejections.map(r => r.reason).join('\n')).toMatch(/pledges: bad pledge for seat 3/)
  })

  it('a record about another COMMIT (another dealer and seats under this table\'s id) is refused by a seat, not logged', () => {
    const t = memoryTable({ timeouts: { contributeMs: 5_000 } })
    const victim = t.signers[2].peerId
    let commit: SignedCommit | undefined
    t.intercept = (_from, _to, doc) => { if (doc.type === 'commit') commit = doc as SignedCommit; return doc.type === 'pledge' ? undefined : doc }
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    const k = signerFromSeed(new Uint8Array(32).fill(99))
    const fake = signDocument('commit', { ...(commit as SignedCommit).body, dealer: k.peerId, seats: [k.peerId, 'robot', 'robot', 'robot'] } as CommitBody, k) as SignedCommit
    t.intercept = undefined
    t.run(t.table.dealer, [{ kind: 'send', to: victim, doc: signAbort(fake, 'missing-pledge', [k.peerId], 'forged', [], k) }])
    expect((t.appended.get(victim) ?? []).filter(e => e.entry === 'abort')).toEqual([])
    expect(t.seats.get(victim)?.status().find(h => h.hand === hand)).toBeDefined()
  })

  it('the dealer machine failing on a time-locked hand past its pledges signs nothing: the hand stays saved, finished from its timelocks', () => {
    const beaconKey = localBeaconSecretKey(new Uint8Array(48).fill(7))
    const chain: ChainInfo = parseChainInfo(localChainInfo({ secretKey: beaconKey, period: 3, genesisTime: 1_690_000_000 }))
    const t = memoryTable({ scheme: 'atout-drand-v1', beacon: { chain, marginMs: 1_000 }, timelock: { rule: 'open' } })
    const { hand, effects } = t.dealer.startHand({ dealer: 0 })
    t.run(t.table.dealer, effects)
    const snap = [...(t.persisted.get(t.table.dealer)?.entries() ?? [])].find(([k]) => k.startsWith('dealer/') && k.includes('/hand/'))?.[1] as { commit: SignedCommit }
    const entry = signLocalRound(beaconKey, (snap.commit.body.beacon as { round: number }).round)
    let failure: unknown
    try { t.dealer.beaconResult(hand, { entry: { ...entry, randomness: 'zz' } as never }) } catch (err) { failure = err }
    expect(failure).toBeInstanceOf(MachineFailure)
    const records = (failure as MachineFailure).effects.filter(e => e.kind === 'append')
    expect(records).toEqual([])
  })
})
