import { bytesEqual, fromHex, isHex } from '../../core/bytes.js'
import { isPeerId, publicKeyFromPeerId } from '../../core/identity.js'
import { signingBytes, verifyDocument, type Signed } from '../../core/signed.js'
import type { DocVerifier } from '../../core/log/index.js'

/**
 * Where the page's Ed25519 checks run. The core's checks are synchronous (`DocVerifier`), while
 * WebCrypto's are promises: so `prepare` finds every signed document in a batch of parsed lines
 * and verifies them all at once with WebCrypto, and `verifyDoc` (handed to the core) answers from
 * those results. A document it was not prepared for, or whose bytes differ from the ones checked,
 * falls back to the pure check: the answer is always the core's rule, only the arithmetic moves.
 */
export interface SignatureEngine {
  /** 'webcrypto' (the browser's own Ed25519) or 'pure' (@noble/curves, the core's default). */
  readonly name: 'webcrypto' | 'pure'
  prepare: (values: readonly unknown[]) => Promise<void>
  verifyDoc: DocVerifier
  /** Forgets what `prepare` found (after the batch it was for). */
  clear: () => void
}

export const pureEngine: SignatureEngine = {
  name: 'pure',
  prepare: async () => {},
  verifyDoc: verifyDocument,
  clear: () => {}
}

interface Subtle {
  importKey: (format: 'raw', key: Uint8Array, algorithm: { name: string }, extractable: boolean, usages: string[]) => Promise<unknown>
  verify: (algorithm: { name: string }, key: unknown, signature: Uint8Array, data: Uint8Array) => Promise<boolean>
}

function subtleCrypto (): Subtle | undefined {
  return (globalThis as { crypto?: { subtle?: Subtle } }).crypto?.subtle
}

// RFC 8032 §7.1, test 1: an empty message. A browser whose WebCrypto lacks Ed25519 (or gets it
// wrong) fails this and the page uses the pure implementation.
const KAT_KEY = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a'
const KAT_SIG = 'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b'

/** The WebCrypto engine when this browser has a working Ed25519, else the pure one. */
export async function bestEngine (): Promise<SignatureEngine> {
  const subtle = subtleCrypto()
  if (subtle === undefined) return pureEngine
  try {
    const key = await subtle.importKey('raw', fromHex(KAT_KEY), { name: 'Ed25519' }, false, ['verify'])
    const good = await subtle.verify({ name: 'Ed25519' }, key, fromHex(KAT_SIG), new Uint8Array(0))
    const bad = await subtle.verify({ name: 'Ed25519' }, key, fromHex(KAT_SIG), new Uint8Array(1))
    if (good && !bad) return webCryptoEngine(subtle)
  } catch {}
  return pureEngine
}

type Doc = Signed<unknown>

function isSignedShape (value: Record<string, unknown>): boolean {
  return typeof value.type === 'string' && typeof value.signer === 'string' && 'body' in value && isHex(value.sig, 64)
}

/** Every signed document in a parsed value: the value itself and any nested ones (a receipt's, an entry's payload). */
function collectDocs (value: unknown, out: Doc[], depth = 0): void {
  if (depth > 32 || typeof value !== 'object' || value === null) return
  if (Array.isArray(value)) { for (const v of value) collectDocs(v, out, depth + 1); return }
  const obj = value as Record<string, unknown>
  if (isSignedShape(obj)) out.push(obj as unknown as Doc)
  for (const v of Object.values(obj)) collectDocs(v, out, depth + 1)
}

function webCryptoEngine (subtle: Subtle): SignatureEngine {
  const keys = new Map<string, Promise<unknown>>()
  const results = new Map<string, { message: Uint8Array, ok: boolean }>()
  const keyFor = (peerId: string): Promise<unknown> => {
    let key = keys.get(peerId)
    if (key === undefined) {
      key = subtle.importKey('raw', publicKeyFromPeerId(peerId), { name: 'Ed25519' }, false, ['verify'])
      if (keys.size > 10_000) keys.clear()
      keys.set(peerId, key)
    }
    return key
  }
  return {
    name: 'webcrypto',
    prepare: async (values) => {
      const docs: Doc[] = []
      for (const v of values) collectDocs(v, docs)
      await Promise.all(docs.map(async doc => {
        if (!isPeerId(doc.signer)) return
        let message: Uint8Array
        try { message = signingBytes(doc.type, doc.signer, doc.body) } catch { return }
        try {
          const ok = await subtle.verify({ name: 'Ed25519' }, await keyFor(doc.signer), fromHex(doc.sig), message)
          results.set(`${doc.signer}|${doc.sig}`, { message, ok })
        } catch {}
      }))
    },
    verifyDoc: (doc) => {
      const known = typeof doc.signer === 'string' && typeof doc.sig === 'string' ? results.get(`${doc.signer}|${doc.sig}`) : undefined
      if (known === undefined || typeof doc.type !== 'string') return verifyDocument(doc)
      let message: Uint8Array
      try { message = signingBytes(doc.type, doc.signer, doc.body) } catch { return false }
      return bytesEqual(message, known.message) ? known.ok : verifyDocument(doc)
    },
    clear: () => { results.clear() }
  }
}
