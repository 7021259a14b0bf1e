// The table page of a live 4-node table in a real headless Chromium: each node's page (logged in
// through its one-time link) shows exactly that seat's own cards, then the shield after the
// reveal; the dealer's page deals and ends the hand with its buttons. The API answers nothing
// without the token or a session, and never serves another seat's cards. One browser.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TestTable } from './helpers/table-nodes.js'
import { launchBrowser, skipBrowserTests, type Browser } from './helpers/browser.js'
import { startTableWeb, type TableWeb } from '../src/daemon/table-web.js'

const skip = skipBrowserTests('test/web-table.test.ts')

describe.skipIf(skip)('the table page of a live table', () => {
  let table: TestTable
  let browser: Browser
  const webs: TableWeb[] = []
  const tokens = ['a', 'b', 'c', 'd'].map(c => c.repeat(64))

  beforeAll(async () => {
    // Seats behind NAT, as the README's setup: each is connected to the dealer only.
    table = await TestTable.prepare({ game: 'coinche', scheme: 'atout-v1', seats: 4, seatsListenNowhere: true })
    const [launched] = await Promise.all([launchBrowser(), table.startAll()])
    browser = launched
    for (const [i, n] of table.nodes.entries()) webs.push(await startTableWeb(n!.daemon, { port: 0, token: tokens[i] }))
  })

  afterAll(async () => {
    for (const w of webs) await w.close()
    await browser?.close()
    await table?.cleanup()
  })

  it('refuses everything without the token or a session; a login link works once', async () => {
    const w = webs[1]
    for (const path of ['/', '/api/status', '/api/cards?hand=1', '/api/events', '/verify', '/table.html']) {
      expect((await fetch(w.url + path)).status, path).toBe(401)
    }
    expect((await fetch(w.url + '/api/status', { headers: { authorization: `Bearer ${tokens[0]}` } })).status).toBe(401) // another node's token
    expect((await fetch(w.url + '/api/deal', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401)
    const status = await fetch(w.url + '/api/status', { headers: { authorization: `Bearer ${tokens[1]}` } })
    expect(status.status).toBe(200)
    expect((await status.json() as { seat: number }).seat).toBe(table.seatOf(1))
    const link = w.loginLink()
    const first = await fetch(link, { redirect: 'manual' })
    expect(first.status).toBe(303)
    expect(first.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/)
    expect((await fetch(link, { redirect: 'manual' })).status).toBe(401)
  })

  it('each seat\'s page shows exactly its own cards, then the shield; the dealer deals and ends from its page', async () => {
    const pages = []
    for (const w of webs) {
      const page = await browser.context.newPage()
      await page.goto(w.loginLink())
      await page.waitForSelector('#peers li[data-connected]')
      pages.push(page)
    }
    const dealerIndex = table.nodes.findIndex(n => n?.peerId === table.local.configs[0].table.dealer)
    const dealerPage = pages[dealerIndex]
    await dealerPage.click('[data-testid=deal]')
    await dealerPage.waitForSelector('[data-testid=hand]')
    const hand = Number(await dealerPage.locator('[data-testid=hand]').first().getAttribute('data-hand'))

    for (const [i, page] of pages.entries()) {
      const shown = page.locator(`[data-testid=hand][data-hand="${hand}"] [data-testid=seat-cards]`)
      await expect.poll(async () => (await shown.innerText()).trim().split(/\s+/).filter(c => c !== '').length, { timeout: 20_000 }).toBe(8)
      const own = table.node(i).daemon.cards(hand).filter(c => !c.public).flatMap(c => c.cards)
      expect((await shown.innerText()).trim()).toBe(own.join(' '))
      // No other seat's card anywhere on the page, nor in what the API serves this node.
      const others = table.nodes.filter((_, j) => j !== i).flatMap(n => n!.daemon.cards(hand).filter(c => !c.public).flatMap(c => c.cards))
      const codes = await page.locator('[data-card]').evaluateAll(els => els.map(e => e.getAttribute('data-card')))
      expect(codes.filter(c => others.includes(c ?? ''))).toEqual([])
      const api = await (await fetch(`${webs[i].url}/api/cards?hand=${hand}`, { headers: { authorization: `Bearer ${tokens[i]}` } })).json() as { cards: Array<{ cards: string[] }> }
      expect(api.cards.flatMap(c => c.cards).filter(c => others.includes(c))).toEqual([])
    }

    await dealerPage.click(`[data-testid=hand][data-hand="${hand}"] [data-testid=end]`)
    for (const page of pages) {
      const shield = page.locator(`[data-testid=hand][data-hand="${hand}"] [data-testid=shield]`)
      await shield.waitFor({ timeout: 20_000 })
      expect(await shield.innerText()).toMatch(/^✓ shield/)
    }
    // Issue 23: a seat's page never says "not connected" of a seat while this node is connected to
    // the dealer (seats without a connection of their own reach each other through it).
    for (const [i, page] of pages.entries()) {
      if (i === dealerIndex) continue
      const states = await page.locator('#peers li[data-state]').evaluateAll(els => els.map(e => [e.getAttribute('data-state'), e.textContent]))
      expect(states.length).toBe(3)
      expect(states.map(([state]) => state).sort()).toEqual(['online', 'through-dealer', 'through-dealer'])
      for (const [state, text] of states) if (state === 'through-dealer') expect(text).toMatch(/no direct connection \(this node reaches it through the dealer\)$/)
    }
    for (const page of pages) await page.close()
  })
})
