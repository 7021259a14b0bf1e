// Debian's Chromium for the benchmarks that time the verifier page (scripts/bench/web.ts,
// scripts/bench/blind.ts): headless, a fresh profile, nothing fetched by the browser itself.
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BrowserContext, Page } from 'playwright-core'

export const CHROMIUM = process.env.FAIRDEAL_CHROMIUM ?? '/usr/bin/chromium'

export function chromiumMissing (): boolean {
  return !existsSync(CHROMIUM)
}

export async function launchChromium (): Promise<{ context: BrowserContext, close: () => Promise<void> }> {
  const { chromium } = await import('playwright-core')
  const profile = await mkdtemp(join(tmpdir(), 'fairdeal-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage']
  })
  return {
    context,
    close: async () => {
      await context.close()
      await rm(profile, { recursive: true, force: true })
    }
  }
}

/** The page's own timing of one file (`url` is the verifier page): its summary and last timing. */
export async function verifyOnPage (page: Page, url: string, file: string): Promise<{ summary: string, entries: number, ms: number, engine: string }> {
  await page.goto(url)
  await page.setInputFiles('[data-testid=receipt-input]', file)
  await page.waitForFunction(() => (globalThis as unknown as { fairdealVerify?: { last?: unknown } }).fairdealVerify?.last !== undefined, undefined, { timeout: 600_000 })
  const last = await page.evaluate(() => (globalThis as unknown as { fairdealVerify: { last: { entries: number, ms: number, engine: string } } }).fairdealVerify.last)
  return { summary: await page.locator('[data-testid=summary]').innerText(), ...last }
}
