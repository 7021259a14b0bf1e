import '../style.css'
import { cardRow } from '../cards.js'
import { el } from '../dom.js'
import { signerFromSeed } from '../../core/identity.js'
import { blindEngineReady } from '../../core/blind/index.js'
import { parseLink, secretDigest, type FinalTableBody, type LinkInvite } from '../../core/join.js'
import type { Signed } from '../../core/signed.js'
import { ROBOT } from '../../core/hand/messages.js'
import type { HandEvent } from '../../protocol/types.js'
import { connectTable, joinFromPage, startSeatNode, UnreachableError, type SeatNet } from './net.js'
import { PageSeatHost } from './host.js'
import { SeatStore } from './store.js'
import { showBundleHash } from './bundle.js'
import { newSeatSeed } from './key.js'
import { beaconBinding } from './beacon.js'
import { playTable } from '../play-table.js'

/**
 * The seat page: opened from a link `table new` printed (the invite in the URL fragment, never sent
 * to any server), it is the seat. Its Ed25519 key is made here and kept in IndexedDB; it joins the
 * table by proving the link's one-time secret to the dealer's node, checks the dealer's signed final
 * table, then plays: the src/protocol seat machine on js-libp2p, its hands and receipt log in
 * IndexedDB, so a reload resumes where it was (docs/browser-seat.md).
 */

/** How often the page tries again to join while the dealer's node cannot be reached. */
const JOIN_RETRY_MS = 2_000

interface HandView {
  cards: string[]
  publicCards: string[]
  shield?: { ok: boolean, problems: string[] }
  aborted?: string
  phase: string
  /** When this seat's own cards came (high-resolution wall clock, ms): `data-cards-at`, read by the benchmark. */
  cardsAt?: number
  /** A played hand's score line, once the game is over. */
  result?: string
  revealed?: boolean
}

/** The seat machine's host, once the page has taken its seat (the card table asks it for each played hand). */
let host: PageSeatHost | undefined
/** Each played hand's last view (kept once the machine lets the finished hand go). */
const lastViews = new Map<number, NonNullable<ReturnType<NonNullable<PageSeatHost['seat']['playView']>>>>()
let seatCount = 0

const status = document.getElementById('status') as HTMLElement
const hands = new Map<number, HandView>()
let logEntries = 0

function say (text: string, error = false): void {
  status.textContent = text
  status.className = error ? 'error' : ''
}

function render (): void {
  const section = document.getElementById('hands') as HTMLElement
  section.replaceChildren()
  for (const [hand, h] of [...hands].sort((a, b) => b[0] - a[0])) {
    const sec = el('section', 'panel hand')
    sec.dataset.hand = String(hand)
    if (h.cardsAt !== undefined) sec.dataset.cardsAt = h.cardsAt.toFixed(3)
    sec.append(el('h2', undefined, `Hand ${hand}`), el('p', 'hint', h.phase))
    const mine = el('div', 'mine')
    mine.append(el('span', 'stage-name', 'your cards'), cardRow(h.cards))
    const codes = el('code', 'codes', h.cards.join(' '))
    codes.dataset.testid = 'seat-cards'
    mine.append(codes)
    sec.append(mine)
    // A played hand: the seat machine's view while it holds the hand, the last one drawn once it is
    // over and gone (the seat machine keeps no view of a finished hand).
    const fetched = host?.seat.playView?.(hand)
    if (fetched !== undefined) lastViews.set(hand, fetched)
    const last = lastViews.get(hand)
    if (last !== undefined) {
      const view = fetched === undefined || h.revealed === true ? { ...last, over: true, toAct: null, legal: [] } : fetched
      sec.append(playTable({ view, own: h.cards, seats: seatCount, result: h.result, act: async action => { await host?.act(hand, action); render() } }))
    }
    if (h.publicCards.length > 0) {
      const pub = el('div', 'public')
      pub.append(el('span', 'stage-name', 'on the table'), cardRow(h.publicCards))
      sec.append(pub)
    }
    if (h.shield !== undefined) {
      const shield = el('p', `shield-line ${h.shield.ok ? 'ok' : 'bad'}`, h.shield.ok ? 'verified' : `failed: ${h.shield.problems.join('; ')}`)
      shield.dataset.testid = 'shield'
      sec.append(shield)
    }
    if (h.aborted !== undefined) sec.append(el('p', 'error', h.aborted))
    section.append(sec)
  }
  const count = document.getElementById('log-count') as HTMLElement
  count.textContent = `${logEntries} entr${logEntries === 1 ? 'y' : 'ies'}`
}

function onEvent (hand: number, e: HandEvent): void {
  const h = hands.get(hand) ?? { cards: [], publicCards: [], phase: 'committed' }
  hands.set(hand, h)
  switch (e.type) {
    case 'committed': h.phase = 'committed: the seats shuffle and contribute'; break
    case 'contributed': h.phase = 'contributed'; break
    case 'cards':
      if (e.public) h.publicCards.push(...e.cards)
      else { h.cards.push(...e.cards); h.cardsAt ??= performance.timeOrigin + performance.now() }
      h.phase = 'dealt'
      break
    case 'revealed': h.phase = 'revealed: checking'; h.revealed = true; break
    case 'played': h.result = e.score.summary; break
    case 'shield': h.shield = { ok: e.ok, problems: e.problems }; h.phase = e.ok ? 'checked' : 'check failed'; break
    case 'receipt': h.phase = 'receipt logged'; break
    case 'aborted': h.aborted = `aborted: ${e.reason}${e.detail !== '' ? ` (${e.detail})` : ''}`; break
    default: break
  }
  render()
}

function showTable (doc: Signed<FinalTableBody>, self: string): void {
  const t = doc.body.table
  ;(document.getElementById('title') as HTMLElement).textContent = `${t.id} · seat ${t.seats.indexOf(self)}`
  ;(document.getElementById('whoami') as HTMLElement).textContent = `this seat's peer id: ${self}`
  ;(document.getElementById('table-line') as HTMLElement).textContent = `${t.game}, ${t.seats.length} seats, ${t.scheme}; signed by the dealer ${t.dealer}`
  const list = document.getElementById('peers') as HTMLElement
  list.replaceChildren(...t.seats.map((p, i) => {
    const li = el('li', undefined, `seat ${i}: ${String(p)}${p === t.dealer ? ' (dealer)' : ''}${p === self ? ' (you)' : ''}${p === ROBOT ? '' : ''}`)
    li.dataset.peer = String(p)
    return li
  }))
}

async function exportLog (store: SeatStore, name: string): Promise<void> {
  const lines = await store.exportLines()
  const blob = new Blob([lines.map(l => l + '\n').join('')], { type: 'application/x-ndjson' })
  const a = document.createElement('a')
  a.href = URL.createObjectURL(blob)
  a.download = `${name}.jsonl`
  a.click()
  setTimeout(() => { URL.revokeObjectURL(a.href) }, 10_000)
}

async function run (): Promise<void> {
  void showBundleHash(document.getElementById('bundle') as HTMLElement)
  let invite: LinkInvite
  try { invite = parseLink(location.hash.slice(1)) } catch (err) { say((err as Error).message, true); return }
  const store = await SeatStore.open(secretDigest(invite.secret).slice(0, 32))
  const seed = await store.seed(async () => {
    const made = await newSeatSeed()
    console.info(`this seat's key was made by ${made.made === 'webcrypto' ? 'WebCrypto' : 'crypto.getRandomValues (no Ed25519 in this browser\'s WebCrypto)'}`)
    return made.seed
  })
  const signer = signerFromSeed(seed)
  ;(document.getElementById('whoami') as HTMLElement).textContent = `this seat's peer id: ${signer.peerId}`
  // What the page cannot play is said before it takes the seat (the final table's are the invite's).
  if (invite.table.timelock !== undefined && invite.table.timelock !== 'off') {
    say('this table is time-locked, and the seat page cannot yet finish a hand from its timelocks (it fetches no beacon round): join it with a seat node (fairdeal table join LINK)', true)
    return
  }
  let beacon
  try { beacon = beaconBinding(invite.table.beacon, invite.table.beaconMarginMs) } catch (err) { say((err as Error).message, true); return }
  const node = await startSeatNode(seed, invite.table.relay !== undefined)
  let final = await store.table()
  if (final === undefined) {
    say(`joining table ${invite.table.id} at seat ${invite.seat}…`)
    for (;;) {
      try {
        final = await joinFromPage(node, invite, signer.peerId, waiting => {
          say(waiting.length > 0 ? `seat ${invite.seat} is yours; waiting for seat ${waiting.join(', ')} to join` : `seat ${invite.seat} is yours; every seat is taken`)
        })
        break
      } catch (err) {
        // A dealer's node not running yet (or restarting) is waited for; a refusal is final.
        if (err instanceof UnreachableError) {
          say(`${(err as Error).message} Trying again every ${JOIN_RETRY_MS / 1000} s.`)
          await new Promise(resolve => setTimeout(resolve, JOIN_RETRY_MS))
          continue
        }
        await node.stop()
        say((err as Error).message, true)
        return
      }
    }
    await store.keepTable(final)
  }
  showTable(final, signer.peerId)
  const t = final.body.table
  await blindEngineReady().catch(() => {})
  // The machine is restored before any frame comes in; what it sends meanwhile (its ASKs) waits for the connection.
  let connected: (net: SeatNet) => void = () => {}
  const ready = new Promise<SeatNet>(resolve => { connected = resolve })
  seatCount = t.seats.length
  const seatHost = new PageSeatHost({ ...t, seats: t.seats as string[], timeouts: t.timeouts }, beacon, signer, store,
    async frame => { await (await ready).send(frame) }, onEvent, seq => { logEntries = seq + 1; render() }, message => { say(message, true) })
  const kept = await store.exportLines()
  logEntries = Math.max(0, kept.length - 1)
  host = seatHost
  await seatHost.restore()
  // The hands in play, as the restored machine holds them (a reload shows them again).
  const mySeat = t.seats.indexOf(signer.peerId)
  for (const h of seatHost.seat.status()) {
    const held = seatHost.seat.cards(h.hand)
    hands.set(h.hand, {
      cards: held.filter(c => !c.public && c.seat === mySeat).flatMap(c => c.cards),
      publicCards: held.filter(c => c.public).flatMap(c => c.cards),
      phase: h.phase
    })
  }
  connected(await connectTable(node, t.dealer, final.body.dealerAddresses, (from, frame) => { seatHost.receive(from, frame) }, up => {
    if (status.className !== 'error') say(up ? 'connected to the dealer\'s node' : 'not connected to the dealer\'s node: dialling again')
  }))
  setInterval(() => { seatHost.tick(Date.now()) }, 100)
  const button = document.getElementById('log-export') as HTMLButtonElement
  button.addEventListener('click', () => { void exportLog(store, `fairdeal-${t.id}-seat-${t.seats.indexOf(signer.peerId)}`) })
  render()
}

run().catch((err: unknown) => { say(`the seat stopped: ${(err as Error).message}`, true) })
