import '../style.css'
import { cardRow } from '../cards.js'
import { el, short } from '../dom.js'
import { familyOfScheme, getScheme } from '../../core/schemes/registry.js'
import { drawLine, drawsDuringHand } from './draws.js'
import { playTable } from '../play-table.js'
import type { PlayView } from '../../protocol/contracts.js'

/**
 * The table page of a running node: the table, who is online, each hand as it happens (the
 * commitment first, then this seat's own cards, the public cards stage by stage, then the shield
 * after the reveal) and, on the dealer's node, the buttons that drive the hand. A dealer-blind hand
 * has no commitment (its COMMIT carries none: the deck is the seats' shuffles), so it shows how far
 * the seats are instead, and its End button is enabled only once every seat holds its cards (the
 * dealer refuses an earlier End). Everything comes
 * from the node's API (same origin, session cookie) and its server-sent events.
 */

interface Peer { peer: string, seats: number[], dealer: boolean, connected: boolean, direction?: 'inbound' | 'outbound' | null, lastDialError?: string, path?: 'direct' | 'relayed' }
interface Status {
  peerId: string
  role: string
  seat: number | null
  table: { id: string, game: string, scheme: string, seats: string[], dealer: string }
  peers: Peer[]
  /** `owed`: a blind hand in `dealt` whose shares are not all in, why End is refused (src/protocol/blind-dealer.ts status). */
  dealerHands: Array<{ hand: number, family: string, phase: string, stages: string[], joined: number, contributed: number, acks: number, owed?: string }>
  /** `shuffled`: a blind hand's shuffles the seat holds (src/protocol/blind-seat.ts status). */
  seatHands: Array<{ hand: number, phase: string, shuffled?: number }>
  beacon: { name?: string, trust?: string } | null
}

interface HandState {
  hand: number
  commitment?: string
  beaconRound?: number | null
  cards: Array<{ stage: string, seat: number | null, public: boolean, cards: string[] }>
  revealed: boolean
  shield?: { ok: boolean, problems: string[] }
  receipt?: number[]
  aborted?: { reason: string, blame: string[], detail: string }
  /** A game that draws during the hand: its actions in order, one line each, by number (seen once). */
  draws?: Map<number, string>
  /** A played hand's score line, once the game is over. */
  result?: string
}

const $ = <T extends HTMLElement>(selector: string): T => document.querySelector(selector) as T
const hands = new Map<number, HandState>()
let status: Status | undefined
/** Played hands as this node's seat sees them (GET /api/play), kept once the hand is over. */
const plays = new Map<number, PlayView>()



/** The table this page shows, on a node serving several (`?table=ID`); null: the node's only table. */
const chosenTable = new URLSearchParams(location.search).get('table')

/** Every request names the chosen table: as a query parameter (GET) or a body field (POST). */
async function api<T> (path: string, body?: unknown): Promise<T> {
  const query = chosenTable === null ? '' : `${path.includes('?') ? '&' : '?'}table=${encodeURIComponent(chosenTable)}`
  const res = await fetch(body === undefined ? path + query : path, body === undefined
    ? { credentials: 'same-origin' }
    : { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chosenTable === null ? body : { ...(body as object), table: chosenTable }) })
  const text = await res.text()
  if (!res.ok) {
    let message = text
    try { message = (JSON.parse(text) as { error?: string }).error ?? text } catch {}
    throw new Error(message.trim())
  }
  return JSON.parse(text) as T
}

function handOf (n: number): HandState {
  let h = hands.get(n)
  if (h === undefined) { h = { hand: n, cards: [], revealed: false }; hands.set(n, h) }
  return h
}

/**
 * A hand event as the node's event stream sends it (src/daemon/events.ts NodeEvent, as JSON): the
 * fields this page reads, written here because browser code imports src/core only (README, "Source
 * layout").
 */
type NodeEvent = {
  hand: number
  role: 'dealer' | 'seat'
  event:
  | { type: 'committed', commitment: string, beaconRound: number | null }
  | { type: 'cards', stage: string, seat: number | null, public: boolean, cards: string[] }
  | { type: 'revealed' }
  | { type: 'shield', ok: boolean, problems: string[] }
  | { type: 'receipt', acked: number[] }
  | { type: 'aborted', reason: string, blame: string[], detail: string }
  | { type: 'contributed' | 'viewing' | 'nonces-recovered' | 'recovered' }
  | { type: 'action', n: number, seat: number, action: unknown }
  | { type: 'played', actions: number, tricks: number, score: { summary: string } }
}

function apply (e: NodeEvent): void {
  const h = handOf(e.hand)
  const ev = e.event
  switch (ev.type) {
    case 'committed': h.commitment = ev.commitment; h.beaconRound = ev.beaconRound; break
    case 'cards':
      // The seat's own view: each stage once (the dealer node's seat and dealer see the same cards).
      if (e.role === 'seat' && !h.cards.some(c => c.stage === ev.stage && c.seat === ev.seat)) h.cards.push({ stage: ev.stage, seat: ev.seat, public: ev.public, cards: ev.cards })
      break
    case 'revealed': h.revealed = true; break
    case 'shield': if (e.role === 'seat') h.shield = { ok: ev.ok, problems: ev.problems }; break
    case 'receipt': h.receipt = ev.acked; break
    case 'aborted': h.aborted = { reason: ev.reason, blame: ev.blame, detail: ev.detail }; break
    case 'contributed': break
    case 'action':
      // The dealer's node and its own seat both report each action: it is shown once.
      if (status !== undefined && drawsDuringHand(status.table.game)) (h.draws ??= new Map()).set(ev.n, drawLine(status.table.game, ev.n, ev.seat, ev.action))
      break
    case 'played': h.result = ev.score.summary; break
  }
}

function phaseOf (hand: number): string {
  const d = status?.dealerHands.find(h => h.hand === hand)?.phase
  const s = status?.seatHands.find(h => h.hand === hand)?.phase
  const h = hands.get(hand)
  if (d === undefined && s === undefined) return h?.aborted !== undefined ? 'aborted' : h?.receipt !== undefined ? 'done' : 'over'
  return [d !== undefined ? `dealer: ${d}` : '', s !== undefined ? `seat: ${s}` : ''].filter(x => x !== '').join(' · ')
}

/** The table deals dealer-blind hands (blind-v1): no commitment, seats shuffle in turn. */
const isBlind = (): boolean => status !== undefined && familyOfScheme(status.table.scheme) === 'blind'

/** Where a blind hand stands, in a player's words: how many seats have shuffled, as the dealer's node or the seat's own node knows it. */
function blindProgress (hand: number): string | null {
  const n = status?.table.seats.length ?? 0
  const d = status?.dealerHands.find(h => h.hand === hand)
  if (d !== undefined) {
    switch (d.phase) {
      case 'keys': return 'waiting for the seats\' hand keys'
      case 'shuffling': return `shuffling: ${d.contributed} of ${n} seats`
      case 'beacon': return `shuffled by all ${n} seats; waiting for the beacon round`
      case 'dealt': return d.owed === undefined ? 'every seat holds its cards' : 'dealing: decryption shares still due'
      case 'unlocking': return 'a seat walked away: waiting for the key round that opens its hand key'
      default: return null
    }
  }
  const s = status?.seatHands.find(h => h.hand === hand)
  switch (s?.phase) {
    case 'keyed': return 'waiting for the seats\' hand keys'
    case 'shuffling': return s.shuffled === undefined ? `the ${n} seats are shuffling the deck in turn` : `shuffling: ${s.shuffled} of ${n} seats`
    default: return null
  }
}

/** Why the dealer would refuse to end this blind hand now, or null when it may (every seat holds its cards). */
function blindEndRefusal (d: Status['dealerHands'][number]): string | null {
  const n = status?.table.seats.length ?? 0
  switch (d.phase) {
    case 'keys': return 'the seats\' hand keys are not all in'
    case 'shuffling': return `the deck is still being shuffled (${d.contributed} of ${n} seats)`
    case 'beacon': return 'the deck is shuffled; the beacon round that orders the deal is not out yet'
    case 'dealt': return d.owed ?? null
    case 'unlocking': return 'a seat walked away: its shares come from its hand key once the key round is out'
    default: return `the hand is already ${d.phase}`
  }
}

function renderHeader (): void {
  if (status === undefined) return
  const t = status.table
  $('#title').textContent = `${t.id} · ${t.game}`
  $('#whoami').textContent = `This node: ${status.role}${status.seat !== null ? ` (seat ${status.seat})` : ''} · ${t.scheme}` +
    (status.beacon !== null ? ` · beacon ${status.beacon.name ?? ''}${status.beacon.trust !== undefined ? ` (${status.beacon.trust})` : ''}` : ' · no beacon')
  const list = $('#peers')
  list.replaceChildren()
  const self = el('li', 'peer online')
  self.textContent = `● this node — ${status.seat !== null ? `seat ${status.seat}` : 'dealer'} ${short(status.peerId)}`
  list.append(self)
  const dealerOnline = status.peers.some(p => p.dealer && p.connected)
  for (const p of status.peers) {
    const li = el('li', `peer ${p.connected ? 'online' : 'offline'}`)
    li.dataset.peer = p.peer
    li.dataset.connected = String(p.connected)
    const what = [p.dealer ? 'dealer' : '', p.seats.length > 0 ? `seat ${p.seats.join(', ')}` : ''].filter(x => x !== '').join(', ')
    // A seat behind NAT is online on the connection it opened to the dealer ("dialled in").
    const how = (p.direction === 'inbound' ? ' (dialled in)' : '') + (p.path === 'relayed' ? ' (through the relay)' : '')
    // A seat talks to the other seats through the dealer when it has no connection of its own to
    // them (a seat behind NAT has none): that is how the table works, not a fault.
    const throughDealer = !p.connected && !p.dealer && status.peerId !== t.dealer && dealerOnline
    const state = p.connected ? `online${how}` : throughDealer ? 'no direct connection (this node reaches it through the dealer)' : 'not connected'
    li.dataset.state = p.connected ? 'online' : throughDealer ? 'through-dealer' : 'offline'
    li.textContent = `${p.connected ? '●' : throughDealer ? '◐' : '○'} ${what} ${short(p.peer)} — ${state}`
    li.title = p.lastDialError !== undefined ? `${p.peer}\nlast dial: ${p.lastDialError}` : p.peer
    list.append(li)
  }
  $('#dealer-controls').hidden = status.peerId !== t.dealer
  // Playing the hand at the table: the card games of commit–reveal tables (a game of draws is always
  // played); at a dealer-blind table too (docs/dealer-blind.md §15).
  $('#deal-play-label').hidden = drawsDuringHand(t.game)
}

function renderHands (): void {
  const box = $('#hands')
  const mySeat = status?.seat ?? null
  const sorted = [...hands.values()].sort((a, b) => b.hand - a.hand)
  box.replaceChildren(...sorted.map(h => {
    const sec = el('section', 'panel hand-live')
    sec.dataset.testid = 'hand'
    sec.dataset.hand = String(h.hand)
    sec.append(el('h2', undefined, `Hand ${h.hand}`), el('p', 'hint', phaseOf(h.hand)))
    const round = h.beaconRound !== undefined && h.beaconRound !== null ? `bound to drand round ${h.beaconRound}` : null
    if (isBlind()) {
      // A blind COMMIT's commitment field is all zeros by design: nothing to check there.
      const progress = blindProgress(h.hand)
      if (progress !== null) {
        const p = el('p', 'facts', progress)
        p.dataset.testid = 'blind-progress'
        sec.append(p)
      }
      if (round !== null && h.commitment !== undefined) sec.append(el('p', 'facts', round))
    } else if (h.commitment !== undefined) {
      sec.append(el('p', 'facts', `commitment ${h.commitment}` + (round !== null ? ` · ${round}` : '')))
    }
    const own = h.cards.filter(c => !c.public && c.seat === mySeat)
    // A game of draws (blackjack's shoe, dice) deals no cards of a seat's own: its draws are listed below.
    if (mySeat !== null && !(status !== undefined && drawsDuringHand(status.table.game))) {
      const mine = el('div', 'mine')
      mine.append(el('span', 'stage-name', `your cards (seat ${mySeat})`))
      const codes = own.flatMap(c => c.cards)
      mine.append(cardRow(codes))
      const code = el('code', 'codes', codes.join(' '))
      code.dataset.testid = 'seat-cards'
      mine.append(code)
      if (codes.length === 0) mine.append(el('span', 'none', h.aborted !== undefined ? 'no cards: the hand stopped' : 'no cards yet'))
      sec.append(mine)
    }
    const fetched = plays.get(h.hand)
    // Once the game is scored or the hand revealed, nothing is left to play (the last view fetched may predate the last card).
    const view = fetched !== undefined && (h.result !== undefined || h.revealed) ? { ...fetched, over: true, toAct: null, legal: [] } : fetched
    if (view !== undefined && !(status !== undefined && drawsDuringHand(status.table.game))) {
      sec.append(playTable({
        view,
        own: h.cards.filter(c => c.seat === mySeat).flatMap(c => c.cards),
        seats: status?.table.seats.length ?? 4,
        result: h.result,
        act: async action => { await api('./api/act', { hand: h.hand, action }); await refresh() }
      }))
    }
    const stages = el('ol', 'stages-list')
    for (const c of h.cards) {
      const li = el('li')
      li.dataset.testid = c.public ? 'public-cards' : 'stage-cards'
      li.append(el('span', 'stage-name', `${c.stage} ${c.public ? (c.seat === null ? '(on the table)' : `(seat ${c.seat}, face up)`) : '(yours)'}`), cardRow(c.cards))
      stages.append(li)
    }
    if (h.cards.length > 0) sec.append(stages)
    if (h.draws !== undefined) {
      // Shoe cards and dice as they come; each is recomputed from the hand's key by every seat after the reveal.
      const draws = el('ol', 'stages-list')
      draws.dataset.testid = 'draws'
      for (const [n, line] of [...h.draws].sort((a, b) => a[0] - b[0])) {
        const li = el('li', undefined, line)
        li.dataset.n = String(n)
        draws.append(li)
      }
      sec.append(draws)
    }
    if (h.result !== undefined) {
      const result = el('p', 'facts', `result: ${h.result}`)
      result.dataset.testid = 'result'
      sec.append(result)
    }
    if (h.shield !== undefined) {
      const shield = el('p', `shield-line ${h.shield.ok ? 'ok' : 'bad'}`, h.shield.ok ? '✓ shield: this seat re-checked the whole deal' : `✗ shield failed: ${h.shield.problems.join('; ')}`)
      shield.dataset.testid = 'shield'
      sec.append(shield)
    } else if (h.revealed) sec.append(el('p', 'hint', 'revealed; waiting for the seats\' checks'))
    if (h.receipt !== undefined) sec.append(el('p', 'hint', `receipt in the log, countersigned by seat ${h.receipt.join(', ')}`))
    if (h.aborted !== undefined) {
      const a = h.aborted
      sec.append(el('p', 'abort', `stopped: ${a.reason}${a.blame.length > 0 ? `, blames ${a.blame.map(short).join(' ')}` : ''}${a.detail !== '' ? ` — ${a.detail}` : ''}`))
    }
    if (status !== undefined && status.peerId === status.table.dealer && status.dealerHands.some(d => d.hand === h.hand)) sec.append(dealerButtons(h.hand))
    return sec
  }))
}

function dealerButtons (hand: number): HTMLElement {
  const box = el('p', 'dealer-buttons')
  const d = status?.dealerHands.find(x => x.hand === hand)
  let later: string[] = []
  try {
    const scheme = getScheme(status?.table.scheme ?? '')
    if (scheme.kind === 'cards') later = scheme.stagesFor(status?.table.game ?? '').slice(1).filter(s => !(d?.stages ?? []).includes(s))
  } catch {}
  for (const stage of later) {
    const b = el('button', undefined, `Deliver ${stage}`) as HTMLButtonElement
    b.type = 'button'
    b.dataset.testid = `stage-${stage}`
    b.addEventListener('click', () => {
      const taker = stage === 'take' ? Number(prompt('Which seat took?') ?? 'NaN') : undefined
      void act(`/api/stage`, { hand, stage, ...(taker !== undefined ? { taker } : {}) }, `hand ${hand}: ${stage} delivered`)
    })
    box.append(b)
  }
  const end = el('button', undefined, 'End the hand (reveal)') as HTMLButtonElement
  end.type = 'button'
  end.dataset.testid = 'end'
  end.addEventListener('click', () => { void act('/api/end', { hand }, `hand ${hand} revealed`) })
  box.append(end)
  const refusal = d !== undefined && isBlind() ? blindEndRefusal(d) : null
  if (refusal !== null) {
    end.disabled = true
    end.title = refusal
    const why = el('span', 'hint', ` not yet: ${refusal}`)
    why.dataset.testid = 'end-reason'
    box.append(why)
  }
  return box
}

async function act (path: string, body: unknown, done: string): Promise<void> {
  const note = $('#action-status')
  try {
    await api(path, body)
    note.textContent = done
  } catch (err) {
    note.textContent = `refused: ${(err as Error).message}`
  }
  await refresh()
}

async function refresh (): Promise<void> {
  try {
    status = await api<Status>('./api/status')
  } catch (err) {
    $('#whoami').textContent = `cannot reach the node: ${(err as Error).message}`
    if (chosenTable === null) await offerTables()
    return
  }
  await fetchPlays()
  renderHeader()
  renderHands()
  follow()
  // A blind hand's shuffles and shares raise no event of the page's: while one is under way on
  // this node (its dealer's or its seat's side), its progress (and when End may be pressed) is fetched every 300 ms.
  const underWay = isBlind() && (status.dealerHands.some(d => ['keys', 'shuffling', 'beacon'].includes(d.phase) || d.owed !== undefined) ||
    status.seatHands.some(s => ['keyed', 'shuffling'].includes(s.phase)))
  if (underWay && soon === undefined) soon = setTimeout(() => { soon = undefined; void refresh() }, 300)
}
let soon: ReturnType<typeof setTimeout> | undefined

/** The play view of each hand this node's seat is in (404: not played here, or over and gone). */
async function fetchPlays (): Promise<void> {
  if (status === undefined || status.seat === null) return
  await Promise.all(status.seatHands.map(async ({ hand }) => {
    try { plays.set(hand, await api<PlayView>(`./api/play?hand=${hand}`)) } catch {}
  }))
}

$('#deal').addEventListener('click', () => {
  const seat = Number(($('#deal-seat') as HTMLInputElement).value)
  const play = ($('#deal-play') as HTMLInputElement).checked && !($('#deal-play-label').hidden)
  void act('/api/deal', { dealer: seat, ...(play ? { play: true } : {}) }, 'hand committed')
})

/** A node serving several tables: one link per table (the page then shows that one). */
async function offerTables (): Promise<void> {
  const { tables } = await api<{ tables: Array<{ id: string, game: string, role: string }> }>('./api/tables').catch(() => ({ tables: [] }))
  if (tables.length < 2) return
  const list = el('p', 'tables')
  list.append('This node serves several tables; choose one: ')
  for (const t of tables) {
    const a = el('a', undefined, `${t.id} (${t.game}, ${t.role})`) as HTMLAnchorElement
    a.href = `?table=${encodeURIComponent(t.id)}`
    list.append(a, ' ')
  }
  $('#whoami').replaceChildren(list)
}

let pending: ReturnType<typeof setTimeout> | undefined
let events: EventSource | undefined
/** Follows the table's events, once the node has answered for the table (a node with several needs one chosen). */
function follow (): void {
  if (events !== undefined) return
  events = new EventSource(chosenTable === null ? './api/events' : `./api/events?table=${encodeURIComponent(chosenTable)}`)
  events.onmessage = (m: MessageEvent<string>) => {
    apply(JSON.parse(m.data) as NodeEvent)
    renderHands()
    // Phases come from the status: fetched once a burst of events is over.
    if (pending !== undefined) clearTimeout(pending)
    pending = setTimeout(() => { void refresh() }, 150)
  }
}
void refresh()
// Peers come and go without events of their own.
setInterval(() => { void refresh() }, 5_000)
