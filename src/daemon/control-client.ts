import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { UsageError } from '../cli/errors.js'
import { CONTROL_FILE, type ControlInfo } from './control.js'
import type { NodeEvent } from './events.js'

/** A client of a running node's control endpoint, found through the node's data directory. */
export class ControlClient {
  constructor (readonly info: ControlInfo) {}

  static async forDataDir (dataDir: string): Promise<ControlClient> {
    let text: string
    try {
      text = await readFile(join(dataDir, CONTROL_FILE), 'utf8')
    } catch {
      throw new UsageError(`no running node found for ${dataDir} (no ${CONTROL_FILE}); start it with 'fairdeal node --config FILE'`)
    }
    try {
      return new ControlClient(JSON.parse(text) as ControlInfo)
    } catch {
      throw new UsageError(`${join(dataDir, CONTROL_FILE)} is not valid JSON`)
    }
  }

  async request<T> (method: 'GET' | 'POST', path: string, body?: unknown, timeoutMs = 40_000): Promise<T> {
    let res: Response
    try {
      res = await fetch(this.info.url + path, {
        method,
        headers: { authorization: `Bearer ${this.info.token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs)
      })
    } catch (err) {
      throw new UsageError(`cannot reach the node at ${this.info.url} (${(err as Error).message}); is it running?`)
    }
    const value = await res.json().catch(() => ({})) as T & { error?: string }
    if (!res.ok) throw new UsageError(value.error ?? `control request failed with HTTP ${res.status}`)
    return value
  }

  async status (): Promise<Record<string, unknown>> { return await this.request('GET', '/status') }
  async deal (dealer?: number): Promise<number> { return (await this.request<{ hand: number }>('POST', '/hand/deal', { dealer })).hand }
  async stage (hand: number, stage: string, taker?: number): Promise<void> { await this.request('POST', '/hand/stage', { hand, stage, taker }) }
  async end (hand: number): Promise<void> { await this.request('POST', '/hand/end', { hand }) }
  async cards (hand: number): Promise<{ hand: number, seat: number | null, cards: Array<{ stage: string, seat: number | null, public: boolean, cards: string[] }> }> {
    return await this.request('GET', `/hand/cards?hand=${hand}`)
  }

  async events (after: number, waitMs: number): Promise<{ events: NodeEvent[], last: number }> {
    return await this.request('GET', `/events?after=${after}&wait=${waitMs}`, undefined, waitMs + 10_000)
  }
}
