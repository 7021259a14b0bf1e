import { afterAll, describe, expect, it } from 'vitest'
import { mkdtemp, readFile, writeFile, chmod, stat, readdir, rm } from 'node:fs/promises'
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPair, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { loadOrCreateIdentity, IDENTITY_FILE } from '../src/net/identity.js'
import { IdentityFileError, NetInputError } from '../src/net/errors.js'
import { signerFromSeed, verifySignature } from '../src/core/identity.js'
import { DEFAULT_LISTEN } from '../src/net/limits.js'
import { cliInProcess } from './helpers/cli-in-process.js'

const dirs: string[] = []
async function freshDir (): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fairdeal-net-id-'))
  dirs.push(dir)
  return dir
}
afterAll(async () => { await Promise.all(dirs.map(async d => { await rm(d, { recursive: true, force: true }) })) })

const mode = async (path: string): Promise<number> => (await stat(path)).mode & 0o777

describe('loadOrCreateIdentity', () => {
  it('creates a 0600 key in a 0700 directory, then loads the same identity', async () => {
    const dir = join(await freshDir(), 'node-a')
    const first = await loadOrCreateIdentity(dir)
    expect(first.created).toBe(true)
    expect(first.path).toBe(join(dir, IDENTITY_FILE))
    expect(await mode(dir)).toBe(0o700)
    expect(await mode(first.path)).toBe(0o600)
    expect(new Uint8Array(await readFile(first.path))).toEqual(privateKeyToProtobuf(first.privateKey))
    expect(first.seed).toHaveLength(32)
    expect(signerFromSeed(first.seed).peerId).toBe(first.peerId)
    expect(first.peerId).toMatch(/^12D3KooW/)

    const second = await loadOrCreateIdentity(dir)
    expect(second.created).toBe(false)
    expect(second.peerId).toBe(first.peerId)
    expect(second.seed).toEqual(first.seed)
    expect(second.privateKey.equals(first.privateKey)).toBe(true)
    expect((await readdir(dir)).sort()).toEqual([IDENTITY_FILE]) // no temp file left behind
  })

  it('gives the libp2p key and the core signer the same signatures', async () => {
    const id = await loadOrCreateIdentity(await freshDir())
    const message = new TextEncoder().encode('commit hand 7')
    const fromLibp2p = new Uint8Array(await id.privateKey.sign(message))
    const fromCore = signerFromSeed(id.seed).sign(message)
    expect(fromCore).toEqual(fromLibp2p)
    expect(verifySignature(id.peerId, message, fromLibp2p)).toBe(true)
  })

  it('creates exactly one key when several processes start at once', async () => {
    const dir = await freshDir()
    const all = await Promise.all(Array.from({ length: 6 }, async () => await loadOrCreateIdentity(dir)))
    expect(new Set(all.map(i => i.peerId)).size).toBe(1)
    expect(all.filter(i => i.created)).toHaveLength(1)
    expect(await readdir(dir)).toEqual([IDENTITY_FILE])
  })

  it.each([0o640, 0o604, 0o660, 0o602])('refuses a key file with mode %o and leaves it alone', async (bad) => {
    const dir = await freshDir()
    const { path } = await loadOrCreateIdentity(dir)
    const before = await readFile(path)
    await chmod(path, bad)
    const err = await loadOrCreateIdentity(dir).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(IdentityFileError)
    expect((err as Error).message).toContain(`mode 0${bad.toString(8)}`)
    expect((err as Error).message).toContain(`chmod 600 ${path}`)
    expect(await readFile(path)).toEqual(before)
  })

  const corruptions: Array<[string, (key: Uint8Array) => Uint8Array, RegExp]> = [
    ['empty', () => new Uint8Array(0), /corrupt/],
    ['truncated', key => key.slice(0, 40), /corrupt/],
    ['followed by a stray byte', key => Uint8Array.of(...key, 0), /corrupt/],
    ['random bytes', () => crypto.getRandomValues(new Uint8Array(68)), /corrupt/],
    ['its public half altered', key => { const k = key.slice(); k[67] ^= 1; return k }, /public key does not belong to its seed/],
    ['oversized', () => new Uint8Array(10_000), /corrupt \(10000 bytes/]
  ]
  it.each(corruptions)('refuses a key file that is %s', async (_name, corrupt, message) => {
    const dir = await freshDir()
    const { path, privateKey } = await loadOrCreateIdentity(dir)
    const bad = corrupt(privateKeyToProtobuf(privateKey))
    await writeFile(path, bad)
    await expect(loadOrCreateIdentity(dir)).rejects.toThrow(message)
    await expect(loadOrCreateIdentity(dir)).rejects.toBeInstanceOf(IdentityFileError)
    expect(new Uint8Array(await readFile(path))).toEqual(bad)
  })

  it('refuses a key of another type', async () => {
    const dir = await freshDir()
    await writeFile(join(dir, IDENTITY_FILE), privateKeyToProtobuf(await generateKeyPair('secp256k1')), { mode: 0o600 })
    await expect(loadOrCreateIdentity(dir)).rejects.toThrow(/holds a secp256k1 key; fairdeal needs Ed25519/)
  })

  it('refuses a data directory that is a file', async () => {
    const file = join(await freshDir(), 'plain-file')
    await writeFile(file, 'x')
    await expect(loadOrCreateIdentity(file)).rejects.toBeInstanceOf(NetInputError)
  })

  // Issue 18: `fairdeal init --data /proc/1/nope` never returned (Node's recursive mkdir retries an
  // ENOENT whose parent exists forever). One line, at once; and nested new directories still work.
  it.runIf(existsSync('/proc/1'))('refuses a directory that cannot be made, in one line, at once', async () => {
    await expect(loadOrCreateIdentity('/proc/1/nope')).rejects.toThrow(/^cannot create data directory \/proc\/1\/nope: ENOENT/)
    const r = await cliInProcess('init', '--data', '/proc/1/nope/deeper')
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    const nested = join(await freshDir(), 'a', 'b', 'c')
    expect((await loadOrCreateIdentity(nested)).created).toBe(true)
    expect((await stat(join(nested, '..'))).mode & 0o777).toBe(0o700)
  })
})

interface Run { code: number | null, stdout: string, stderr: string }
async function fairdeal (...args: string[]): Promise<Run> {
  return await new Promise(resolve => {
    execFile(process.execPath, ['bin/fairdeal.js', ...args], { cwd: join(import.meta.dirname, '..') }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : (err as { code?: number }).code ?? null, stdout, stderr })
    })
  })
}

// The first run spawns the built binary; the others go through the same entry point (`main`) in this process.
describe('fairdeal init (built CLI)', () => {
  it('needs a build first', () => {
    expect(existsSync(join(import.meta.dirname, '..', 'dist/src/cli/commands/init.js')), 'run npm run build').toBe(true)
  })

  it('creates the identity once and prints the peer id and the default listen addresses', async () => {
    const dir = join(await freshDir(), 'data')
    const first = await fairdeal('init', '--data', dir)
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const peerId = (await loadOrCreateIdentity(dir)).peerId
    expect(first.stdout).toBe([
      `created a new identity in ${join(dir, IDENTITY_FILE)}`,
      `peer id: ${peerId}`,
      'listen addresses:',
      ...DEFAULT_LISTEN.map(a => `  ${a}/p2p/${peerId}`)
    ].join('\n') + '\n')
    expect(DEFAULT_LISTEN).toEqual(['/ip4/127.0.0.1/tcp/7400', '/ip4/127.0.0.1/tcp/7401/ws'])

    const again = await cliInProcess('init', '--data', dir, '--listen', '/ip4/127.0.0.1/tcp/9000', '--listen', '/ip6/::1/tcp/9001/ws', '--json')
    expect(again.code).toBe(0)
    expect(JSON.parse(again.stdout)).toEqual({
      peerId,
      created: false,
      keyFile: join(dir, IDENTITY_FILE),
      listen: [`/ip4/127.0.0.1/tcp/9000/p2p/${peerId}`, `/ip6/::1/tcp/9001/ws/p2p/${peerId}`]
    })
  })

  it('fails with one line and exit 2 on bad input, creating nothing', async () => {
    const dir = join(await freshDir(), 'data')
    const badAddr = await cliInProcess('init', '--data', dir, '--listen', '/ip4/127.0.0.1/udp/9000')
    expect(badAddr.code).toBe(2)
    expect(badAddr.stderr).toBe('fairdeal init: unsupported listen address "/ip4/127.0.0.1/udp/9000": expected /ip4/HOST/tcp/PORT or /ip4/HOST/tcp/PORT/ws (ip6 also accepted)\n')
    expect(existsSync(dir)).toBe(false)

    const noData = await cliInProcess('init')
    expect(noData.code).toBe(2)
    expect(noData.stderr).toBe('fairdeal init: --data DIR is required\n')

    await loadOrCreateIdentity(dir)
    await chmod(join(dir, IDENTITY_FILE), 0o644)
    const badMode = await cliInProcess('init', '--data', dir)
    expect(badMode.code).toBe(2)
    expect(badMode.stderr.split('\n')).toHaveLength(2)
    expect(badMode.stderr).toMatch(/^fairdeal init: identity key file .* is accessible by group or others \(mode 0644\)/)
  })
})
