// The action chain (src/core/games/action-chain.ts, docs/games.md "The action chain"): a known-answer
// hand signed seat by seat replays to its score; each broken link is caught with its reason code.
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { replayChain, signAction, type ActionDoc } from '../src/core/games/action-chain.js'
import { engines } from '../src/core/games/index.js'
import { signerFromSeed } from '../src/core/identity.js'
import type { GameSetup } from '../src/core/games/types.js'

const load = (name: string) => JSON.parse(readFileSync(new URL(`./fixtures/games/${name}`, import.meta.url), 'utf8')) as {
  setup: GameSetup
  steps: ({ seat: number, action: unknown } | { deliver: string, cards: Record<string, string[]> })[]
  score: number[]
}
const signers = [1, 2, 3, 4].map((k) => signerFromSeed(new Uint8Array(32).fill(k)))
const seatSigners = signers.map((s) => s.peerId)
const HAND = 'hand-7'

function sign(steps: { seat: number, action: unknown }[]): ActionDoc[] {
  const out: ActionDoc[] = []
  for (const s of steps) out.push(signAction(signers[s.seat], HAND, out.at(-1) ?? null, s.seat, s.action))
  return out
}

const coinche = load('coinche-dedans-coinche.json')
const actions = coinche.steps as { seat: number, action: unknown }[]
const chain = sign(actions)
const ctx = { hand: HAND, seatSigners, stage: () => null, complete: true }

describe('action chain', () => {
  it('a signed known-answer hand replays to its score', () => {
    const r = replayChain(engines.coinche, coinche.setup, chain, ctx)
    if (!r.ok) throw new Error(`${r.code} ${r.reason}`)
    expect(engines.coinche.score(r.state).points).toEqual(coinche.score)
  })
  it('a belote hand replays with its take stage delivered from the deal, and fails without it', () => {
    const b = load('belote-first-round-made.json')
    const deliver = b.steps.find((s) => 'deliver' in s) as { cards: Record<string, string[]> }
    const acts = b.steps.filter((s) => 'seat' in s) as { seat: number, action: unknown }[]
    const c = sign(acts)
    const r = replayChain(engines.belote, b.setup, c, { ...ctx, stage: (req) => (req.stage === 'take' && req.inputs?.taker === 1 ? deliver.cards : null) })
    if (!r.ok) throw new Error(`${r.code} ${r.reason}`)
    expect(engines.belote.score(r.state).points).toEqual(b.score)
    expect(replayChain(engines.belote, b.setup, c, ctx)).toMatchObject({ ok: false, index: 1, code: 'chain-stage-missing' })
  })
  it('each broken link is refused with its code', () => {
    const run = (c: unknown[], extra = {}) => replayChain(engines.coinche, coinche.setup, c, { ...ctx, ...extra })
    const tampered = chain.map((d, i) => (i === 5 ? { ...d, body: { ...d.body, action: { type: 'card', card: 'TS' } } } : d))
    expect(run(tampered)).toMatchObject({ ok: false, index: 5, code: 'chain-signature' })
    // a card seat 1 does not hold, signed with seat 1's own key: only the game's rules catch it
    const resigned = [...chain.slice(0, 5), signAction(signers[1], HAND, chain[4], 1, { type: 'card', card: 'JH' })]
    expect(run(resigned, { complete: false })).toMatchObject({ ok: false, index: 5, code: 'chain-illegal-action', rule: 'card-not-held' })
    const dropped = [...chain.slice(0, 5), ...chain.slice(6)]
    expect(run(dropped)).toMatchObject({ ok: false, index: 5, code: 'chain-number' })
    const renumbered = [...chain.slice(0, 5), signAction(signers[1], HAND, chain[3], 1, actions[5].action)]
    expect(run(renumbered)).toMatchObject({ ok: false, index: 5, code: 'chain-number' })
    // numbered right but naming another document than the previous one (a fork)
    const forked = [...chain.slice(0, 5), signAction(signers[1], HAND, { ...chain[3], body: { ...chain[3].body, n: 5 } }, 1, actions[5].action)]
    expect(run(forked)).toMatchObject({ ok: false, index: 5, code: 'chain-prev' })
    const stranger = [...chain.slice(0, 5), signAction(signers[2], HAND, chain[4], 1, actions[5].action)]
    expect(run(stranger)).toMatchObject({ ok: false, index: 5, code: 'chain-wrong-signer' })
    expect(run(chain, { hand: 'hand-8' })).toMatchObject({ ok: false, index: 0, code: 'chain-wrong-hand' })
    expect(run(chain.slice(0, 10))).toMatchObject({ ok: false, index: 10, code: 'chain-not-over' })
    expect(run([{ type: 'game-action' }])).toMatchObject({ ok: false, index: 0, code: 'chain-bad-document' })
  })
})
