// One link per seat (issue 20): the dealer's join desk binds each seat to the first peer that proves
// its link's secret, refuses a used or altered link in one sentence, and once every seat is taken
// signs the final table, which each seat checks. In memory: the desk's answers, the draft files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { signerFromSeed } from '../src/core/identity.js'
import {
  checkFinalTable, formatLink, joinAsSeat, newJoinSecret, parseLink, secretDigest, signFinalTable, type JoinReply, type LinkInvite
} from '../src/core/join.js'
import { gatherSeats, JoinDesk, readDraft, writeJson, type Draft } from '../src/daemon/table-join.js'
import { loadIdentity } from '../src/net/identity.js'
import { dialFailureHint, dialFailureKind } from '../src/net/reach.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { fairdeal } from './helpers/cli.js'
import { requireBuild } from './helpers/node-process.js'

const dealer = signerFromSeed(new Uint8Array(32).fill(1))
const players = [2, 3, 4].map(i => signerFromSeed(new Uint8Array(32).fill(i)))
const stranger = signerFromSeed(new Uint8Array(32).fill(9))
let n = 0
const random = (k: number): Uint8Array => new Uint8Array(k).fill(++n)

describe('joining by link', () => {
  let dir: string
  beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'fairdeal-join-')) })
  afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

  function setUp (): { draft: Draft, links: LinkInvite[] } {
    const table = { id: 'coinche-night', game: 'coinche', scheme: 'blind-v1', dealer: dealer.peerId, seats: [dealer.peerId, null, null, null], beacon: 'none' }
    const secrets = [1, 2, 3].map(() => newJoinSecret(random))
    const draft: Draft = {
      listen: ['/ip4/127.0.0.1/tcp/18040'], table, peers: {},
      links: { digests: Object.fromEntries(secrets.map((s, i) => [String(i + 1), secretDigest(s)])), webPort: 18041 }
    }
    const dealerAddresses = [`/ip4/127.0.0.1/tcp/18040/p2p/${dealer.peerId}`]
    return { draft, links: secrets.map((secret, i) => ({ v: 2, table: structuredClone(table), seat: i + 1, secret, dealerAddresses })) }
  }

  it('a link round-trips through its URL fragment; a damaged one is one sentence', () => {
    const { links } = setUp()
    const url = formatLink('http://127.0.0.1:18041/seat', links[0])
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:18041\/seat#[A-Za-z0-9_-]+$/)
    expect(parseLink(url)).toEqual(links[0])
    expect(() => parseLink(url.slice(0, -3) + '***')).toThrow('this link is damaged (characters outside base64url): copy it again, whole')
    expect(() => parseLink('http://127.0.0.1:18041/seat')).toThrow('this link has no invite after its # (copy the whole link)')
  })

  it('a dealer\'s node that hangs up on a link (its table complete) counts as hung up over TCP and WebSockets alike: the link was used', () => {
    // A closed TCP dial rejects with a bare close event, a WebSocket's with an EOF: both are the
    // gater hanging up, which 'table join' turns into "this link was used already".
    const tcpClose = { type: 'close' }
    expect(dialFailureKind(tcpClose)).toBe('closed')
    expect(dialFailureHint(tcpClose)).toMatch(/^connection closed — it answered and hung up/)
    expect(dialFailureKind(new Error('Unexpected EOF - stream closed while reading 0/1 bytes'))).toBe('closed')
    expect(dialFailureKind({ type: 'error' })).toBe('other')
  })

  it('seats join in any order; a used, altered or foreign link is refused and changes nothing; the final table is signed and checked', async () => {
    const { draft, links } = setUp()
    const desk = new JoinDesk(dir, draft, dealer, pino({ level: 'silent' }))
    const req = (l: LinkInvite): { table: string, seat: number, secret: string } => ({ table: l.table.id, seat: l.seat, secret: l.secret })
    expect(await desk.request(players[2].peerId, req(links[2]))).toEqual({ kind: 'bound', seat: 3, waiting: [1, 2] })
    const altered = { ...req(links[0]), secret: links[0].secret.slice(0, -2) + (links[0].secret.endsWith('AA') ? 'BA' : 'AA') }
    const refusals: JoinReply[] = [
      await desk.request(stranger.peerId, req(links[2])),
      await desk.request(stranger.peerId, altered),
      await desk.request(stranger.peerId, { ...req(links[0]), seat: 2 }),
      await desk.request(stranger.peerId, { ...req(links[0]), table: 'other' }),
      await desk.request(players[2].peerId, req(links[0]))
    ]
    expect(refusals).toEqual([
      { kind: 'refused', reason: `this link was used already: seat 3 of table coinche-night is taken by another player (${players[2].peerId}); ask the dealer for a new one` },
      { kind: 'refused', reason: 'this link is not valid for seat 1 of table coinche-night: it was altered, or replaced by a later \'table new\'; ask the dealer for a new one' },
      { kind: 'refused', reason: 'this link is not valid for seat 2 of table coinche-night: it was altered, or replaced by a later \'table new\'; ask the dealer for a new one' },
      { kind: 'refused', reason: 'this node deals table coinche-night, not other: the link is for another table' },
      { kind: 'refused', reason: `this player (${players[2].peerId}) already holds seat 3 of table coinche-night` }
    ])
    expect(desk.open()).toEqual([1, 2])
    // The same player asking again keeps its seat.
    expect(await desk.request(players[2].peerId, req(links[2]))).toEqual({ kind: 'bound', seat: 3, waiting: [1, 2] })
    const saved = JSON.parse(await readFile(join(dir, 'node.json'), 'utf8')) as { table: { seats: unknown[] }, web: { port: number } }
    expect([saved.table.seats, saved.web.port]).toEqual([[dealer.peerId, null, null, players[2].peerId], 18041])

    // Seat 1 joins over a stream (joinAsSeat, as the CLI and the page do) and waits; seat 2 completes the table.
    const replies: Uint8Array[] = []
    let wake: (() => void) | undefined
    let onBound: (waiting: number[]) => void = () => {}
    const bound = { promise: new Promise<number[]>(resolve => { onBound = resolve }), resolve: (w: number[]) => { onBound(w) } }
    const seat1 = joinAsSeat({
      write: async (bytes) => {
        const r = await desk.request(players[0].peerId, JSON.parse(new TextDecoder().decode(bytes)) as { table: string, seat: number, secret: string })
        replies.push(new TextEncoder().encode(JSON.stringify(r)))
        void desk.complete.then(doc => { replies.push(new TextEncoder().encode(JSON.stringify({ kind: 'table', doc }))); wake?.() })
      },
      read: async () => {
        while (replies.length === 0) await new Promise<void>(resolve => { wake = resolve })
        return replies.shift() as Uint8Array
      }
    }, links[0], players[0].peerId, waiting => { bound.resolve(waiting) })
    expect(await bound.promise).toEqual([2])
    expect(await desk.request(players[1].peerId, req(links[1]))).toEqual({ kind: 'bound', seat: 2, waiting: [] })
    const final = await seat1
    expect(final.body.table.seats).toEqual([dealer.peerId, players[0].peerId, players[1].peerId, players[2].peerId])
    expect(checkFinalTable(final, links[1], players[1].peerId)).toBeUndefined()
    const written = JSON.parse(await readFile(join(dir, 'table-draft.json'), 'utf8')) as Draft
    expect(written.links?.final).toEqual(final)

    // A table the dealer changed, or signed by someone else, is refused by the seat.
    const changed = signFinalTable({ ...final.body, table: { ...final.body.table, scheme: 'atout-v1' } }, dealer)
    const forged = signFinalTable(final.body, stranger)
    const swapped = signFinalTable({ ...final.body, table: { ...final.body.table, seats: [dealer.peerId, stranger.peerId, players[1].peerId, players[2].peerId] } }, dealer)
    expect([checkFinalTable(changed, links[0], players[0].peerId), checkFinalTable(forged, links[0], players[0].peerId), checkFinalTable(swapped, links[0], players[0].peerId)]).toEqual([
      'the dealer\'s final table changed scheme from the invite\'s',
      `the table is signed by ${stranger.peerId}, not by the dealer ${dealer.peerId}`,
      `the dealer's final table gives seat 1 to ${stranger.peerId}, not to this player (${players[0].peerId})`
    ])
    // A restarted dealer reads the bindings back: the table stays complete, a stranger stays out.
    await writeJson(join(dir, 'copy.json'), written)
    const again = new JoinDesk(dir, JSON.parse(await readFile(join(dir, 'copy.json'), 'utf8')) as Draft, dealer, pino({ level: 'silent' }))
    expect(await again.complete).toEqual(final)
    expect((await again.request(stranger.peerId, req(links[0]))).kind).toBe('refused')
  })

  it('over loopback: CLI seats join a joining dealer node from their links, in any order; a used and an altered link are refused in one sentence', async () => {
    requireBuild()
    const alice = join(dir, 'alice')
    const made = await cliInProcess('table', 'new', '--game', 'tarot', '--seats', '3', '--data', alice, '--listen', '/ip4/127.0.0.1/tcp/18043', '--web-port', '18044')
    expect(made.code, made.stderr).toBe(0)
    const links = [1, 2].map(i => new RegExp(`^seat ${i}: (http://127\\.0\\.0\\.1:18044/seat#\\S+)$`, 'm').exec(made.stdout)?.[1] as string)
    const identity = await loadIdentity(alice)
    const stop = new AbortController()
    const gathering = gatherSeats({ dir: alice, draft: await readDraft(alice) as Draft, privateKey: identity.privateKey, signer: signerFromSeed(identity.seed), logger: pino({ level: 'silent' }), signal: stop.signal })
    // Seat 2 first, in its own process: it waits for seat 1.
    const bob = fairdeal('table', 'join', links[1], '--data', join(dir, 'bob'))
    const seats = async (): Promise<unknown[]> => (JSON.parse(await readFile(join(alice, 'node.json'), 'utf8')) as { table: { seats: unknown[] } }).table.seats
    for (let i = 0; (await seats())[2] === null; i++) {
      if (i > 200) throw new Error('seat 2 did not join')
      await new Promise(resolve => setTimeout(resolve, 25))
    }
    const used = await cliInProcess('table', 'join', links[1], '--data', join(dir, 'mallory'))
    const invite = parseLink(links[0])
    const altered = await cliInProcess('table', 'join', formatLink('http://127.0.0.1:18044/seat', { ...invite, secret: (invite.secret.startsWith('A') ? 'B' : 'A') + invite.secret.slice(1) }), '--data', join(dir, 'mallory'))
    const bobKey = (await seats())[2] as string
    // The stranger's key is made first (and said so); then the one sentence.
    expect([used.code, used.stderr.trim().split('\n').pop()]).toEqual([2, `fairdeal table join: this link was used already: seat 2 of table tarot-night is taken by another player (${bobKey}); ask the dealer for a new one`])
    expect([altered.code, altered.stderr]).toEqual([2, 'fairdeal table join: this link is not valid for seat 1 of table tarot-night: it was altered, or replaced by a later \'table new\'; ask the dealer for a new one\n'])
    const carol = await cliInProcess('table', 'join', links[0], '--data', join(dir, 'carol'))
    expect(carol.code, carol.stderr).toBe(0)
    const bobDone = await bob
    expect(bobDone.code, bobDone.stderr).toBe(0)
    expect(bobDone.stderr).toMatch(/^took seat 2 of table tarot-night \(tarot, blind-v1\); waiting for seat 1 to join/m)
    const final = await gathering
    const dealerSeats = await seats()
    expect(final?.body.table.seats).toEqual(dealerSeats)
    for (const who of ['bob', 'carol']) {
      expect((JSON.parse(await readFile(join(dir, who, 'node.json'), 'utf8')) as { table: { seats: unknown[] } }).table.seats).toEqual(dealerSeats)
    }
  })
})
