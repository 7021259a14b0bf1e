import { mkdir, open, link, rename, unlink, stat } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { dirname, join } from 'node:path'
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import type { Ed25519PrivateKey } from '@libp2p/interface'
import { peerIdFromPublicKey } from '../core/identity.js'
import { nativePublicKey } from '../crypto/native-crypto.js'
import { bytesEqual } from '../core/bytes.js'
import { IdentityFileError, NetInputError } from './errors.js'
import { IDENTITY_FILE_MAX_BYTES } from './limits.js'

/** The key file's name inside the data directory. */
export const IDENTITY_FILE = 'identity.key'

export interface NodeIdentity {
  /** The libp2p key: give it to createNode. */
  privateKey: Ed25519PrivateKey
  /** The 32-byte Ed25519 seed of the same key, for core `signerFromSeed`. */
  seed: Uint8Array
  /** The peer id ("12D3KooW…") both of them stand for. */
  peerId: string
  /** True when this call generated the key, false when it was read from disk. */
  created: boolean
  /** Where the key lives. */
  path: string
}

/**
 * The node's persistent identity from `dataDir/identity.key`, generating it on first use.
 *
 * The file is the libp2p protobuf encoding of an Ed25519 private key, mode 0600, in a directory
 * created with mode 0700. A key file that group or others can access, or that does not decode to
 * exactly one Ed25519 key whose public half matches its seed, is refused with IdentityFileError
 * rather than replaced: losing a key silently would orphan every receipt it signed.
 */
export async function loadOrCreateIdentity (dataDir: string): Promise<NodeIdentity> {
  if (typeof dataDir !== 'string' || dataDir.length === 0) {
    throw new NetInputError('the data directory must be a non-empty path')
  }
  await ensureDirectory(dataDir)
  const path = join(dataDir, IDENTITY_FILE)
  const existing = await readKeyFile(path)
  if (existing !== undefined) return { ...decodeKey(existing, path), created: false, path }
  const written = await writeNewKey(dataDir, path)
  // A concurrent creator may have won the race: whatever is on disk now is the identity.
  if (!written) {
    const winner = await readKeyFile(path)
    if (winner === undefined) throw new IdentityFileError(`identity key file ${path} vanished while being created`)
    return { ...decodeKey(winner, path), created: false, path }
  }
  const bytes = await readKeyFile(path)
  if (bytes === undefined) throw new IdentityFileError(`identity key file ${path} vanished right after being created`)
  return { ...decodeKey(bytes, path), created: true, path }
}

/**
 * The identity of `dataDir`, which must already have one: every command but `fairdeal init` (and
 * the table set-up commands) uses this, so a typo in a path never silently makes a new identity.
 */
export async function loadIdentity (dataDir: string): Promise<NodeIdentity> {
  if (typeof dataDir !== 'string' || dataDir.length === 0) {
    throw new NetInputError('the data directory must be a non-empty path')
  }
  const path = join(dataDir, IDENTITY_FILE)
  const existing = await readKeyFile(path)
  if (existing === undefined) {
    throw new IdentityFileError(`no identity in ${dataDir} (${path} does not exist): create one with 'fairdeal init --data ${dataDir}', or check the path`)
  }
  return { ...decodeKey(existing, path), created: false, path }
}

async function ensureDirectory (dataDir: string): Promise<void> {
  try {
    await makeDirectory(dataDir)
  } catch (err) {
    throw new NetInputError(`cannot create data directory ${dataDir}: ${(err as Error).message}`)
  }
  const info = await stat(dataDir)
  if (!info.isDirectory()) throw new NetInputError(`data directory ${dataDir} is not a directory`)
}

/**
 * `mkdir -p` with mode 0700, one level at a time. Node's own `recursive: true` never returns where
 * a directory's mkdir fails with ENOENT although its parent exists (`/proc/1/nope`): it creates the
 * parent and tries again, forever. Here such a failure is final.
 */
async function makeDirectory (path: string): Promise<void> {
  try {
    await mkdir(path, { mode: 0o700 })
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return
    const parent = dirname(path)
    if (code !== 'ENOENT' || parent === path) throw err
    const parentExists = await stat(parent).then(() => true, () => false)
    if (parentExists) throw err
    await makeDirectory(parent)
    try { await mkdir(path, { mode: 0o700 }) } catch (again) { if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again }
  }
}

/** The key file's bytes, or undefined when there is none; refuses unsafe or oversized files. */
async function readKeyFile (path: string): Promise<Uint8Array | undefined> {
  let handle
  try {
    handle = await open(path, 'r')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new IdentityFileError(`cannot open identity key file ${path}: ${(err as Error).message}`)
  }
  try {
    // fstat on the open handle: the checked file is the file read, whatever renames happen.
    const info = await handle.stat()
    if (!info.isFile()) throw new IdentityFileError(`identity key file ${path} is not a regular file`)
    const mode = info.mode & 0o777
    if ((mode & 0o077) !== 0) {
      throw new IdentityFileError(
        `identity key file ${path} is accessible by group or others (mode ${mode.toString(8).padStart(4, '0')}); ` +
        `run 'chmod 600 ${path}' if it is yours, or move it away to start with a new identity`)
    }
    if (info.size > IDENTITY_FILE_MAX_BYTES) {
      throw new IdentityFileError(`identity key file ${path} is corrupt (${info.size} bytes, an Ed25519 key file is 68)`)
    }
    const { buffer, bytesRead } = await handle.read(new Uint8Array(IDENTITY_FILE_MAX_BYTES + 1), 0, IDENTITY_FILE_MAX_BYTES + 1, 0)
    return buffer.slice(0, bytesRead)
  } finally {
    await handle.close()
  }
}

function decodeKey (bytes: Uint8Array, path: string): Omit<NodeIdentity, 'created' | 'path'> {
  let key
  try {
    key = privateKeyFromProtobuf(bytes)
  } catch (err) {
    throw new IdentityFileError(`identity key file ${path} is corrupt (${(err as Error).message})`)
  }
  if (key.type !== 'Ed25519') {
    throw new IdentityFileError(`identity key file ${path} holds a ${key.type} key; fairdeal needs Ed25519`)
  }
  // Re-encoding must give the file back byte for byte: trailing bytes or unknown fields mean the
  // file is not what we wrote.
  if (!bytesEqual(privateKeyToProtobuf(key), bytes)) {
    throw new IdentityFileError(`identity key file ${path} is corrupt (it is not a canonical Ed25519 key encoding)`)
  }
  const seed = key.raw.slice(0, 32)
  const peerId = peerIdFromPrivateKey(key).toString()
  // The libp2p encoding stores seed and public key side by side without checking that they match;
  // receipts are signed from the seed and connections authenticated with the public key. (OpenSSL
  // derives the key: the pure path would build noble's tables in every process for this one check.)
  if (peerIdFromPublicKey(nativePublicKey(seed)) !== peerId) {
    throw new IdentityFileError(`identity key file ${path} is corrupt (its public key does not belong to its seed)`)
  }
  return { privateKey: key, seed, peerId }
}

/**
 * Writes a fresh key next to `path` and links it into place, which fails (returns false) instead of
 * overwriting when another process created the key first. Rename is the fallback for file systems
 * without hard links.
 */
async function writeNewKey (dataDir: string, path: string): Promise<boolean> {
  const key = await generateKeyPair('Ed25519')
  const bytes = privateKeyToProtobuf(key)
  const temp = join(dataDir, `.${IDENTITY_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  const handle = await open(temp, 'wx', 0o600)
  try {
    await handle.chmod(0o600) // the umask can only narrow 0600, but say exactly what we mean
    await handle.writeFile(bytes)
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    try {
      await link(temp, path)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'EEXIST') return false
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw err
      await rename(temp, path)
    }
  } finally {
    await unlink(temp).catch(() => {})
  }
  await syncDirectory(dataDir)
  return true
}

/** Makes the new directory entry durable, so a crash cannot lose a key already handed out. */
async function syncDirectory (dir: string): Promise<void> {
  let handle
  try {
    handle = await open(dir, 'r')
    await handle.sync()
  } catch {
    // Some platforms cannot open or fsync a directory; the file itself is already synced.
  } finally {
    await handle?.close()
  }
}
