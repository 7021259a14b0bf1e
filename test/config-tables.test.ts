// A node serving several tables: the `tables` config block, and how the node routes each incoming
// document to the table its body names (in memory; the real-network run is test/load.test.ts).
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { addressBookOf, MAX_TABLES, nodeMembers, parseNodeConfig } from '../src/daemon/config.js'
import { tableFor } from '../src/daemon/daemon.js'
import { NodeInputError } from '../src/daemon/errors.js'
import { Rejection } from '../src/protocol/types.js'
import { connectionLimit, MAX_CONNECTIONS, MAX_CONNECTIONS_PER_MEMBER, MAX_STRANGER_CONNECTIONS } from '../src/net/limits.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SOURCE = '/cfg/node.json'
const ALICE = '12D3KooWS7tzXhC3NPEjp7fmvuHbRgdXicv63L6G68dvbM6932fP'
const BOB = '12D3KooWLzaAmAVepV657n3JZiXPU2WCCHxPD6gULGsfpQfzRxXo'
const CAROL = '12D3KooWBxVo6EsoYmmrTQMQMkMqComR29P49biGYscwrVxwxKki'

/** The shipped seat example, its `table` moved into `tables` with a second (duo) table beside it. */
async function twoTables (): Promise<Record<string, any>> {
  const value = JSON.parse(await readFile(join(ROOT, 'config/seat.example.json'), 'utf8')) as Record<string, any>
  const first = value.table
  delete value.table
  value.tables = [first, {
    id: 'tuesday-duo',
    game: 'duo',
    scheme: 'atout-v1',
    dealer: ALICE,
    seats: [BOB, CAROL],
    peers: { [ALICE]: ['/ip4/192.0.2.7/tcp/7500'], [CAROL]: ['/ip4/192.0.2.8/tcp/7400'] },
    timeouts: { contributeMs: 2000 }
  }]
  return value
}

async function refusal (value: unknown): Promise<string> {
  const err = await parseNodeConfig(value, SOURCE).then(() => undefined, (e: unknown) => e)
  expect(err).toBeInstanceOf(NodeInputError)
  const message = (err as Error).message
  expect(message).not.toContain('\n')
  return message
}

describe('config: tables', () => {
  test('each table keeps its own peers, timeouts and beacon; the top-level table fields are the first table', async () => {
    const config = await parseNodeConfig(await twoTables(), SOURCE)
    expect(config.tables.map(t => t.table.id)).toEqual(['friday-coinche', 'tuesday-duo'])
    const [coinche, duo] = config.tables
    expect(duo.timeouts).toEqual({ contributeMs: 2000, ackMs: 10_000, revealMs: 3_600_000 })
    expect(duo.beacon.kind).toBe('none')
    expect(coinche.beacon.kind).toBe('drand')
    expect(duo.peers[CAROL]).toEqual(['/ip4/192.0.2.8/tcp/7400'])
    expect({ table: config.table, peers: config.peers, timeouts: config.timeouts, beacon: config.beacon }).toEqual({ table: coinche.table, peers: coinche.peers, timeouts: coinche.timeouts, beacon: coinche.beacon })
    // The node dials every member of any table at every address any table gives for it.
    expect(addressBookOf(config.tables).get(ALICE)).toEqual(['/dns4/dealer.example.net/tcp/7400', '/dns4/dealer.example.net/tcp/7401/ws', '/ip4/192.0.2.7/tcp/7500'])
    expect(addressBookOf(config.tables).get(CAROL)).toEqual(['/ip4/192.0.2.8/tcp/7400'])
    // The node's members: every member of any of its tables, once each.
    expect(nodeMembers(config.tables).sort()).toEqual([...new Set([...coinche.table.seats, ALICE, BOB, CAROL])].sort())
  })

  test('a config with `table` alone is one table, exactly as before', async () => {
    const value = JSON.parse(await readFile(join(ROOT, 'config/seat.example.json'), 'utf8')) as Record<string, any>
    const config = await parseNodeConfig(value, SOURCE)
    expect(config.tables).toHaveLength(1)
    expect(config.tables[0].table).toEqual(config.table)
    expect(config.table.id).toBe('friday-coinche')
  })

  const cases: Array<[string, (c: Record<string, any>) => void, string]> = [
    ['both table and tables', c => { c.table = c.tables[0] }, 'field tables: give either table (one table) or tables (several), not both'],
    ['neither', c => { delete c.tables }, 'field table: is missing'],
    ['no table in tables', c => { c.tables = [] }, 'field tables: '],
    ['two tables with one id', c => { c.tables[1].id = c.tables[0].id }, 'field tables.1.id: table friday-coinche is named twice (each table of a node needs its own id)'],
    ['a bad game in the second table', c => { c.tables[1].game = 'poker' }, 'field tables.1.game: atout-v1 has no game poker'],
    ['a peer of the second table that is not its member', c => { c.tables[1].peers['12D3KooWNKA7Cmag5jyCkrfwJmgZFVxF7Vp61WVTZorSt3dRKEFx'] = ['/ip4/192.0.2.9/tcp/1'] },
      'field tables.1.peers.12D3KooWNKA7Cmag5jyCkrfwJmgZFVxF7Vp61WVTZorSt3dRKEFx: is not a member of the table'],
    ['a misspelt field in the second table', c => { c.tables[1].timeout = {} }, 'field tables.1: '],
    ['a beacon scheme without a beacon in the first', c => { c.tables[0].beacon = 'none' }, 'field tables.0.scheme: atout-drand-v1 needs a beacon: set tables.0.beacon'],
    [`more than ${MAX_TABLES} tables`, c => { c.tables = [...Array(MAX_TABLES + 1).keys()].map(k => ({ ...c.tables[1], id: `t${k}` })) }, 'field tables: ']
  ]
  test.each(cases)('%s: one line naming the field', async (_what, mutate, expected) => {
    const value = await twoTables()
    mutate(value)
    expect((await refusal(value)).startsWith(`${SOURCE}: ${expected}`), await refusal(value)).toBe(true)
  })
})

describe('routing a document to its table', () => {
  const tables = new Map([
    ['a', { id: 'a', members: new Set([ALICE, BOB]) }],
    ['b', { id: 'b', members: new Set([ALICE, CAROL]) }]
  ])
  const doc = (table: string): { type: string, signer: string, body: unknown, sig: string } => ({ type: 'pledge', signer: BOB, body: { table, hand: 1 }, sig: '00' })

  test('the table its body names, when the sender is a member of that table', () => {
    expect(tableFor(tables, BOB, doc('a')).id).toBe('a')
    expect(tableFor(tables, CAROL, doc('b')).id).toBe('b')
  })

  test('a table the node does not serve, or a member of another table, is refused with its reason', () => {
    expect(() => tableFor(tables, BOB, doc('c'))).toThrow(new Rejection('pledge for table c, which this node does not serve'))
    // Bob sits at table a only: a member of the node, but not of table b.
    expect(() => tableFor(tables, BOB, doc('b'))).toThrow(new Rejection('pledge for table b from a peer who is not at that table'))
  })
})

describe('connection room for the members of every table', () => {
  test('a one-table node keeps the usual limit; a node whose tables have many members gets each member\'s share beside the strangers\' share', () => {
    expect(connectionLimit(8)).toBe(MAX_CONNECTIONS)
    // 32 tables of 8 seats, every player different: 257 members.
    expect(connectionLimit(257)).toBe(MAX_CONNECTIONS_PER_MEMBER * 257 + MAX_STRANGER_CONNECTIONS)
  })
})
