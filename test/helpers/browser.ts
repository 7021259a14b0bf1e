import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'

/**
 * Debian's Chromium, driven by playwright-core (browsers cannot be downloaded here). The browser
 * tests need it: without it they are skipped with a message locally, and fail in CI (CI=true),
 * where .ci/run installs it.
 */
export const CHROMIUM = process.env.FAIRDEAL_CHROMIUM ?? '/usr/bin/chromium'

export const browserMissing = !existsSync(CHROMIUM)
const inCi = process.env.CI === 'true'

/** True when the browser tests must be skipped (and says so once); throws in CI when Chromium is absent. */
export function skipBrowserTests (file: string): boolean {
  if (!browserMissing) return false
  if (inCi) throw new Error(`${file}: ${CHROMIUM} is missing, and CI=true requires the browser tests: apt-get install -y chromium`)
  process.stderr.write(`\n${file}: SKIPPED, ${CHROMIUM} is absent (install it: apt-get update && apt-get install -y chromium)\n\n`)
  return true
}

export interface Browser {
  context: BrowserContext
  close: () => Promise<void>
}

/** A headless Chromium with a fresh profile, nothing fetched from the network by the browser itself. */
export async function launchBrowser (): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'fairdeal-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage']
  })
  return {
    context,
    close: async () => {
      await context.close().catch(() => {})
      await rm(profile, { recursive: true, force: true })
    }
  }
}
