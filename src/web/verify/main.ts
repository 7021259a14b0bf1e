import '../style.css'
import { analyse, entriesChecked, summaryText, verdictText, InputError, type Analysis, type EntryResult, type HandView } from './analyse.js'
import { bestEngine, pureEngine, type SignatureEngine } from './ed25519.js'
import { cardRow } from '../cards.js'
import { el, short } from '../dom.js'
import { blindEngineReady } from '../../core/blind/index.js'

/**
 * The verifier page: a file in (picked or dropped), every entry checked here by src/core, one
 * verdict per entry and the hands as their players saw them. Needs no server: `fairdeal web` only
 * adds a button for the node's own log (`./log.jsonl`).
 */

const $ = <T extends HTMLElement>(selector: string): T => document.querySelector(selector) as T
const input = $<HTMLInputElement>('[data-testid=receipt-input]')
const drop = $<HTMLElement>('#drop')
const statusEl = $<HTMLElement>('#status')
const resultEl = $<HTMLElement>('#result')
const engineSelect = $<HTMLSelectElement>('#engine')
const engineNote = $<HTMLElement>('#engine-note')

let webCrypto: SignatureEngine | undefined
const ready = bestEngine().then(engine => {
  webCrypto = engine.name === 'webcrypto' ? engine : undefined
  engineNote.textContent = webCrypto !== undefined ? '(this browser has WebCrypto Ed25519)' : '(no WebCrypto Ed25519 here: pure JavaScript)'
  const wanted = new URLSearchParams(location.search).get('ed25519')
  if (wanted === 'pure' || wanted === 'webcrypto') engineSelect.value = wanted
})

function engine (): SignatureEngine {
  if (engineSelect.value === 'pure') return pureEngine
  return webCrypto ?? pureEngine
}



interface Timing { entries: number, ms: number, engine: string }
/** The last run, for benchmarks and tests: entries checked, wall time, the Ed25519 engine used. */
declare global { interface Window { fairdealVerify?: { last?: Timing, running: boolean } } }
window.fairdealVerify = { running: false }

// The dealer-blind proofs run on libsodium's ristretto255 (WebAssembly) once it has loaded, on
// noble's until then: the same results, the same engine as the CLI (docs/dealer-blind.md §1).
const blindEngine = blindEngineReady().catch(() => {})

async function verifyText (text: string, name: string): Promise<void> {
  await blindEngine
  await ready
  const used = engine()
  window.fairdealVerify = { running: true }
  resultEl.replaceChildren()
  statusEl.textContent = `checking ${name}…`
  const started = performance.now()
  let analysis: Analysis
  try {
    analysis = await analyse(text, {
      engine: used,
      onProgress: (done, total) => { statusEl.textContent = `checking ${name}: ${done} of ${total} lines…` }
    })
  } catch (err) {
    statusEl.textContent = ''
    const message = err instanceof InputError ? err.message : `could not check it: ${(err as Error).message}`
    resultEl.replaceChildren(el('p', 'error', `${name}: ${message}`))
    resultEl.querySelector('.error')?.setAttribute('data-testid', 'input-error')
    window.fairdealVerify = { running: false }
    return
  }
  render(analysis)
  // Timed to the last verdict shown: reading, checking and drawing.
  const ms = performance.now() - started
  const checked = entriesChecked(analysis)
  statusEl.textContent = `${name}: ${checked} ${checked === 1 ? 'entry' : 'entries'} checked in ${(ms / 1000).toFixed(2)} s ` +
    `(Ed25519: ${used.name === 'webcrypto' ? 'WebCrypto' : 'pure JavaScript'})`
  window.fairdealVerify = { running: false, last: { entries: checked, ms, engine: used.name } }
}

function render (analysis: Analysis): void {
  const summary = el('p', `summary ${analysis.failed === 0 ? 'ok' : 'bad'}`, summaryText(analysis))
  summary.dataset.testid = 'summary'
  const head = el('div', 'overview')
  head.append(summary)
  if (analysis.input === 'log') {
    head.append(el('p', 'owner', `log of ${analysis.owner ?? 'an unknown owner'}` +
      (analysis.headSeq !== undefined && analysis.headSeq !== null ? `, signed head at seq ${analysis.headSeq}` : '')))
  }
  const list = el('ol', 'entries')
  for (const entry of analysis.entries) list.append(entryElement(entry))
  resultEl.replaceChildren(head, list)
}

function entryElement (entry: EntryResult): HTMLElement {
  const li = el('li', `entry ${entry.status}`)
  li.dataset.testid = 'entry'
  li.dataset.label = entry.label
  const top = el('div', 'entry-head')
  const shield = el('span', `shield ${entry.status}`, entry.status === 'verified' ? '✓' : entry.status === 'incomplete' ? '?' : '✗')
  shield.setAttribute('aria-hidden', 'true')
  const title = el('span', 'title', entry.label)
  const what = entry.hand !== undefined
    ? `${entry.hand.table} · hand ${entry.hand.hand} · ${entry.hand.game}`
    : entry.abort !== undefined
      ? `${entry.abort.table} · hand ${entry.abort.hand} · abort`
      : entry.kind ?? ''
  const verdict = el('span', 'verdict', verdictText(entry))
  verdict.dataset.testid = 'verdict'
  top.append(shield, title, el('span', 'what', what), verdict)
  if (entry.time !== undefined) top.append(el('span', 'time', new Date(entry.time).toISOString().slice(0, 16).replace('T', ' ') + ' UTC'))
  li.append(top)
  if (entry.hand !== undefined) li.append(handElement(entry.hand))
  if (entry.abort !== undefined) {
    const a = entry.abort
    li.append(el('p', 'abort', `stopped: ${a.reason}${a.blame.length > 0 ? `, blames ${a.blame.map(short).join(' ')}` : ', blames nobody'}` +
      ` (record by ${short(a.by)})${a.detail !== '' ? ` — ${a.detail}` : ''}`))
  }
  return li
}

function handElement (hand: HandView): HTMLElement {
  const box = el('div', 'hand')
  box.append(el('p', 'facts', `${hand.scheme} · dealing seat ${hand.dealerSeat} · ` +
    (hand.beaconRound === null ? 'no beacon' : `drand round ${hand.beaconRound}`) + ` · commitment ${hand.commitment.slice(0, 16)}…`))
  const table = el('table', 'seats')
  for (const seat of hand.seats) {
    const tr = document.createElement('tr')
    const who = el('td', 'who', `seat ${seat.seat}${seat.seat === hand.dealerSeat ? ' (deals)' : ''}`)
    who.title = seat.player
    const peer = el('td', 'peer', short(seat.player))
    peer.title = seat.player
    const cards = el('td', 'stages')
    for (const s of seat.cards) {
      const stage = el('span', 'stage')
      stage.append(el('span', 'stage-name', s.public ? `${s.stage} (face up)` : s.stage), cardRow(s.cards))
      stage.dataset.testid = 'hand-cards'
      cards.append(stage)
    }
    if (seat.cards.length === 0) cards.append(el('span', 'none', 'no cards'))
    const ack = el('td', 'ack', seat.player === 'robot' ? 'robot' : seat.countersigned ? 'countersigned' : 'not countersigned')
    tr.append(who, peer, cards, ack)
    table.append(tr)
  }
  box.append(table)
  for (const s of hand.onTable) {
    const p = el('p', 'on-table')
    p.append(el('span', 'stage-name', s.stage === 'turnUp' ? 'turned up' : s.stage === 'dog' ? 'the dog' : s.stage), cardRow(s.cards))
    p.dataset.testid = 'table-cards'
    box.append(p)
  }
  return box
}

async function verifyFile (file: File): Promise<void> {
  let text: string
  try { text = await file.text() } catch (err) {
    resultEl.replaceChildren(el('p', 'error', `cannot read ${file.name}: ${(err as Error).message}`))
    return
  }
  await verifyText(text, file.name)
}

input.addEventListener('change', () => {
  const file = input.files?.[0]
  if (file !== undefined) void verifyFile(file)
})
drop.addEventListener('dragover', e => { e.preventDefault(); drop.classList.add('over') })
drop.addEventListener('dragleave', () => { drop.classList.remove('over') })
drop.addEventListener('drop', e => {
  e.preventDefault()
  drop.classList.remove('over')
  const file = e.dataTransfer?.files[0]
  if (file !== undefined) void verifyFile(file)
})
engineSelect.addEventListener('change', () => {
  if (engineSelect.value === 'webcrypto' && webCrypto === undefined) engineNote.textContent = '(not available here: pure JavaScript is used)'
})

// Served by `fairdeal web`: the node's own log is one click away.
void (async () => {
  if (location.protocol === 'file:') return
  try {
    const res = await fetch('./log.jsonl', { method: 'HEAD' })
    if (!res.ok) return
    const served = $<HTMLElement>('#served')
    served.hidden = false
    const owner = res.headers.get('x-fairdeal-log')
    if (owner !== null) $<HTMLElement>('#served-note').textContent = `(${owner})`
    $<HTMLButtonElement>('[data-testid=load-served-log]').addEventListener('click', () => {
      void (async () => {
        const r = await fetch('./log.jsonl')
        if (!r.ok) { resultEl.replaceChildren(el('p', 'error', `cannot load the node's log: ${r.status} ${await r.text()}`)); return }
        await verifyText(await r.text(), 'the node\'s log')
      })()
    })
  } catch {}
})()
