// The seat in the page (issue 20), in a real headless Chromium: after `table new --game coinche
// --seats 4` and the dealer's `fairdeal node`, three pages opened from the printed links join (no
// answer, no table line), play a blind hand to the shield, one of them reloaded mid-hand resumes
// from IndexedDB; a page's exported log passes `fairdeal verify`, the dealer's receipt carries
// every seat's ack; a used link is refused in one sentence. One browser, one dealer process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { launchBrowser, skipBrowserTests, type Browser } from './helpers/browser.js'
import { NodeProcess } from './helpers/node-process.js'
import { cliInProcess } from './helpers/cli-in-process.js'
import { fairdeal } from './helpers/cli.js'
import { until } from './helpers/until.js'
import { spawn } from 'node:child_process'

const BIN = join(import.meta.dirname, '..', 'bin', 'fairdeal.js')

const skip = skipBrowserTests('test/web-seat.test.ts')

const [TCP, WS, WEB] = [18050, 18051, 18052]
/** How often a wait looks again at what it waits for (a page's text, a node's status). */
const POLL_MS = 50
/** Each wait's bound: generous, since a loaded machine (the whole suite on two cores) slows three browsers down; no wait sleeps it out. */
const WAIT_MS = 30_000
/** Until the page's status line says it is connected to the dealer. */
async function connected (page: Page): Promise<void> {
  await page.locator('[data-testid=status]').filter({ hasText: /connected to the dealer's node$/ }).waitFor({ timeout: WAIT_MS })
}

/** What each page shows of a hand (its phase, its cards, an abort and its reason), for a wait on it that failed. */
async function handShown (pages: Page[], hand: number): Promise<string> {
  const shown = await Promise.all(pages.map(async (page, i) => {
    const text = await page.locator(`section[data-hand="${hand}"]`).innerText({ timeout: 1_000 }).catch(() => `no hand ${hand} shown`)
    return `page ${i}: ${text.replace(/\s+/g, ' ').slice(0, 400)}`
  }))
  return shown.join('\n')
}

describe.skipIf(skip)('the seat page', () => {
  let dir: string
  let browser: Browser
  let dealer: NodeProcess | undefined
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fairdeal-web-seat-'))
    browser = await launchBrowser()
  })
  afterAll(async () => {
    await dealer?.stop()
    await browser?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('three pages join from their links, play a blind coinche hand to the shield, resume after a reload, export a log that verifies; a used link is refused', async () => {
    const data = join(dir, 'alice')
    // The three pages shuffle in turn, all within the one deadline of the keys and the shuffles: on a
    // loaded machine (the whole suite on two cores, three pages in one browser) the default 10 s can
    // pass with a page still shuffling, which is then named as if silent and the hand aborts.
    const made = await cliInProcess('table', 'new', '--game', 'coinche', '--seats', '4', '--data', data, '--contribute-seconds', '30',
      '--listen', `/ip4/127.0.0.1/tcp/${TCP}`, '--listen', `/ip4/127.0.0.1/tcp/${WS}/ws`, '--web-port', String(WEB))
    expect(made.code, made.stderr).toBe(0)
    const links = [1, 2, 3].map(i => new RegExp(`^seat ${i}: (http://127\\.0\\.0\\.1:${WEB}/seat#\\S+)$`, 'm').exec(made.stdout)?.[1] as string)
    expect(links.every(l => l !== undefined)).toBe(true)
    // The node takes the seats first; its control endpoint (what NodeProcess waits for) comes once all have joined.
    const starting = NodeProcess.start(join(data, 'node.json'), data, 2 * WAIT_MS)
    // Stopped by afterAll even if something fails before it is awaited.
    starting.then(n => { dealer = n }, () => {})
    await until(async () => (await fetch(`http://127.0.0.1:${WEB}/seat`).catch(() => undefined))?.status === 200, 'the seat page served', WAIT_MS, POLL_MS)
    const pages = await Promise.all(links.map(async link => {
      const page = await browser.context.newPage()
      page.on('pageerror', err => { process.stderr.write(`page error: ${err.message}\n`) })
      await page.goto(link)
      return page
    }))
    dealer = await starting
    const seats = await Promise.all(pages.map(async page => {
      await connected(page)
      return (await page.textContent('[data-testid=whoami]'))?.replace(/^this seat's peer id: /, '') as string
    }))
    const table = JSON.parse(await readFile(join(data, 'node.json'), 'utf8')) as { table: { seats: string[] } }
    expect(table.table.seats.slice(1)).toEqual(seats)
    // Each page shows every seat's peer id, its own marked.
    expect(await pages[0].locator('[data-testid=peers] li').allTextContents()).toEqual(table.table.seats.map((p, i) => `seat ${i}: ${p}${i === 0 ? ' (dealer)' : ''}${i === 1 ? ' (you)' : ''}`))
    await until(async () => ((await dealer!.client.status()) as { peers?: Array<{ connected: boolean }> }).peers?.every(p => p.connected) === true, 'every page connected', WAIT_MS, POLL_MS)

    const hand = await dealer.client.deal()
    const codes = async (i: number): Promise<string[]> => {
      const text = await pages[i].locator(`section[data-hand="${hand}"] [data-testid=seat-cards]`).textContent({ timeout: WAIT_MS })
      return (text ?? '').split(' ').filter(Boolean)
    }
    // Eight card codes each (the page's CSP allows no evaluated script: locators, not waitForFunction).
    for (const page of pages) {
      await page.locator(`section[data-hand="${hand}"] [data-testid=seat-cards]`).filter({ hasText: /^(\S+ ){7}\S+$/ }).waitFor({ timeout: WAIT_MS })
        .catch(async (err: Error) => { throw new Error(`${err.message}\n${await handShown(pages, hand)}`) })
    }
    const dealt = await Promise.all([0, 1, 2].map(codes))
    for (const c of dealt) expect(c.every(x => /^[789TJQKA][CDHS]$/.test(x))).toBe(true)
    expect(new Set(dealt.flat()).size).toBe(24)
    // Page 2 reloads mid-hand: the same key, the same seat, its cards, from IndexedDB.
    await pages[1].reload()
    await connected(pages[1])
    expect(await codes(1)).toEqual(dealt[1])
    expect(await pages[1].textContent('[data-testid=whoami]')).toBe(`this seat's peer id: ${seats[1]}`)

    await dealer.client.end(hand)
    for (const page of pages) await page.waitForSelector(`section[data-hand="${hand}"] [data-testid=shield]:text("verified")`, { timeout: WAIT_MS })
    await until(async () => (await pages[0].textContent('[data-testid=log-count]')) === '1 entry', 'the page logged its receipt', WAIT_MS, POLL_MS)

    // The page's log, exported, verifies with the CLI; the dealer's receipt holds every seat's ack.
    const [download] = await Promise.all([pages[0].waitForEvent('download'), pages[0].click('[data-testid=log-export]')])
    const exported = join(dir, 'page-log.jsonl')
    await writeFile(exported, await readFile(await download.path()))
    const checked = await fairdeal('verify', exported)
    expect([checked.code, checked.stdout.trim().split('\n').pop()]).toEqual([0, '1 passed, 0 failed'])
    await until(async () => ((await dealer!.client.status()) as { log?: { entries: number } }).log?.entries === 1, 'the dealer logged the receipt', WAIT_MS, POLL_MS)
    const dealerLog = await fairdeal('verify', '--data', data)
    expect([dealerLog.code, dealerLog.stdout.trim().split('\n').pop()]).toEqual([0, '1 passed, 0 failed'])

    // A used link, opened where nobody holds its key (another origin: another IndexedDB, so another key).
    const stranger = await browser.context.newPage()
    await stranger.goto(links[0].replace('127.0.0.1', 'localhost'))
    await stranger.waitForSelector('[data-testid=status].error', { timeout: WAIT_MS })
    expect(await stranger.textContent('[data-testid=status]')).toBe('this link was used already: every seat of table coinche-night is taken and the dealer\'s node lets in only its players; ask the dealer for a new link')
    // The page shows the bundle's SHA-256, the figure `npm run build` printed.
    const bundle = JSON.parse(await readFile(join(import.meta.dirname, '..', 'dist', 'web', 'bundle.json'), 'utf8')) as { sha256: string }
    expect(await pages[0].textContent('[data-testid=bundle-hash]')).toBe(bundle.sha256)
  }, 4 * WAIT_MS)

  // A dealer nobody can dial (issue 20) at a played table (issue 21): the dealer's node listens
  // nowhere and holds a reservation on a `fairdeal relay` listening on WebSockets; the page, opened
  // from its link, joins through the relay and its person bids and plays every card of seat 1 by
  // clicking (the dealer node's own seat is played by its robot); the hand ends checked
  // ("verified") and the page logs its receipt. The table is blind-v1, `table new`'s default for
  // people: the page opens each card it plays in the browser (docs/dealer-blind.md §15.1).
  it('through the relay of a dealer nobody can dial, a page joins and plays a whole duo hand by clicking its bids and cards', async () => {
    const [relayPort, web] = [18056, 18057]
    const relayDir = join(dir, 'relay')
    const id = await cliInProcess('init', '--data', relayDir, '--json')
    const relayAddress = `/ip4/127.0.0.1/tcp/${relayPort}/ws/p2p/${(JSON.parse(id.stdout) as { peerId: string }).peerId}`
    const data = join(dir, 'behind-nat')
    const made = await cliInProcess('table', 'new', '--game', 'duo', '--seats', '2', '--data', data, '--listen', 'none', '--relay', relayAddress, '--web-port', String(web))
    expect(made.code, made.stderr).toBe(0)
    expect((JSON.parse(await readFile(join(data, 'node.json'), 'utf8')) as { table: { scheme: string } }).table.scheme).toBe('blind-v1')
    const link = new RegExp(`^seat 1: (http://127\\.0\\.0\\.1:${web}/seat#\\S+)$`, 'm').exec(made.stdout)?.[1] as string
    const relay = spawn(process.execPath, [BIN, 'relay', '--data', relayDir, '--listen', `/ip4/127.0.0.1/tcp/${relayPort}/ws`, '--config', join(data, 'node.json')], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FAIRDEAL_LOG_LEVEL: 'info' } })
    let relayOut = ''
    relay.stdout.setEncoding('utf8').on('data', (c: string) => { relayOut += c })
    relay.stderr.setEncoding('utf8').on('data', (c: string) => { relayOut += c })
    let nat: NodeProcess | undefined
    const page = await browser.context.newPage()
    try {
      await until(async () => /relay ready/.test(relayOut), 'the relay ready', WAIT_MS, POLL_MS)
      const starting = NodeProcess.start(join(data, 'node.json'), data, 2 * WAIT_MS)
      // Stopped in the end even if something fails before it is awaited.
      starting.then(n => { nat = n }, () => {})
      await until(async () => (await fetch(`http://127.0.0.1:${web}/seat`).catch(() => undefined))?.status === 200, 'the seat page served', WAIT_MS, POLL_MS)
      page.on('pageerror', err => { process.stderr.write(`page error: ${err.message}\n`) })
      await page.goto(link)
      nat = await starting
      await connected(page)
      await until(async () => ((await nat!.client.status()) as { peers?: Array<{ connected: boolean, path?: string }> }).peers?.every(p => p.connected && p.path === 'relayed') === true, 'the page connected through the relay', WAIT_MS, POLL_MS)
      const hand = await nat.client.deal(undefined, undefined, true)
      const section = page.locator(`section[data-hand="${hand}"]`)
      const text = async (testid: string): Promise<string> => await section.locator(`[data-testid=${testid}]`).first().innerText({ timeout: 200 }).catch(() => '')
      const over = async (): Promise<boolean> => /^the hand is over/.test(await text('turn'))
      let clicks = 0
      for (let i = 0; i < 80; i++) {
        await until(async () => await over() || (await text('turn') === 'your turn' && await section.locator('[data-testid=play] button:enabled').count() > 0), 'the page\'s turn or the end of the game', WAIT_MS, POLL_MS)
        if (await over()) break
        const before = await section.locator('[data-testid=play]').getAttribute('data-actions')
        const bid80 = section.locator('[data-testid=bids] button:enabled[data-action*=\'"value":80\']')
        const card = section.locator('[data-testid=hand-cards] button:enabled')
        await (await bid80.count() > 0 ? bid80 : await card.count() > 0 ? card : section.locator('[data-testid=bids] button:enabled')).first().click()
        clicks++
        await until(async () => await over() || await section.locator('[data-testid=play]').getAttribute('data-actions', { timeout: 200 }).catch(() => before) !== before, 'the action on the chain', WAIT_MS, POLL_MS)
      }
      expect(clicks).toBeGreaterThanOrEqual(16)
      await page.waitForSelector(`section[data-hand="${hand}"] [data-testid=shield]:text("verified")`, { timeout: WAIT_MS })
      await until(async () => (await page.textContent('[data-testid=log-count]')) === '1 entry', 'the page logged its receipt', WAIT_MS, POLL_MS)
      // The dealer's receipt: every card the page played carries the opening it made.
      await until(async () => ((await nat!.client.status()) as { log?: { entries: number } }).log?.entries === 1, 'the dealer logged the receipt', WAIT_MS, POLL_MS)
      const exported = await fairdeal('log', 'export', '--data', data)
      const receipt = JSON.parse(exported.stdout.trim().split('\n')[1]).body.payload as { play: { actions: Array<{ body: { seat: number, action: { type: string, card?: string }, opening?: { card: string } } }> } }
      const pageCards = receipt.play.actions.filter(a => a.body.seat === 1 && a.body.action.type === 'card')
      expect(pageCards).toHaveLength(16)
      for (const a of pageCards) expect(a.body.opening?.card).toBe(a.body.action.card)
    } finally {
      await page.close()
      await nat?.stop()
      relay.kill('SIGTERM')
      if (relay.exitCode === null) await new Promise(resolve => relay.once('exit', resolve))
    }
  }, 4 * WAIT_MS)

})
