import { CoreInputError } from '../errors.js'
import { isHex } from '../bytes.js'
import { verifyDocument, type Signed } from '../signed.js'
import { dealersOf, type GroupParams } from './group-params.js'

// The signed documents of the group DKG (Joint-Feldman). Every body names the session (the hash
// of the group's parameters), so no document can be replayed into another group or another run.
// Each is an ordinary fairdeal Signed<T> (Ed25519 by the member's peer key, domain-tagged by type).

export const DKG_DEAL = 'beacon-group/deal'
export const DKG_SHARE = 'beacon-group/share'
export const DKG_RESPONSES = 'beacon-group/responses'
export const DKG_RESULT = 'beacon-group/result'

/** A dealer's public commitments to its polynomial: C_0 … C_{t-1} on G2 (broadcast). */
export interface DealBody { session: string, dealer: number, commitments: string[] }
/**
 * The share f_dealer(recipient), signed by the dealer. Sent privately to its recipient; published
 * only as the dealer's answer to that recipient's complaint, or as the evidence of a complaint.
 */
export interface ShareBody { session: string, dealer: number, recipient: number, share: string }
/**
 * What a member says about every deal once dealing is over: a complaint per dealer whose share it
 * lacks (`missing`: the dealer must answer by publishing the share) or whose signed share does not
 * match the dealer's commitments (`bad-share`: the signed share is the proof; the dealer is out).
 * An empty list says "no complaint": once all n are in, nobody waits for a deadline.
 * `view` is every deal the member holds (two for a dealer it saw equivocate), each signed by its
 * dealer: whoever holds this document holds every deal its signer based its complaints on, so a
 * dealer that showed two members two deals is caught by everyone holding either's responses.
 */
export interface ResponsesBody { session: string, member: number, complaints: Complaint[], view: Array<Signed<DealBody>> }
export type Complaint =
  | { dealer: number, kind: 'missing' }
  | { dealer: number, kind: 'bad-share', evidence: Signed<ShareBody> }
/** A member's outcome of the DKG; members compare them. */
export interface ResultBody { session: string, member: number, qual: number[], groupKey: string, groupHash: string }

export type DkgDocument = Signed<DealBody> | Signed<ShareBody> | Signed<ResponsesBody> | Signed<ResultBody>

/** Bounds on what a DKG document may hold (its frame is also size-limited by the transport). */
export const MAX_DKG_DOCUMENT_BYTES = 256 * 1024

function obj (v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new CoreInputError(`${what} must be a JSON object`)
  return v as Record<string, unknown>
}

function index (v: unknown, n: number, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1 || v > n) throw new CoreInputError(`${what} must be a member index from 1 to ${n}`)
  return v
}

function hex (v: unknown, bytes: number, what: string): string {
  if (!isHex(v, bytes)) throw new CoreInputError(`${what} must be ${bytes} bytes of lowercase hex`)
  return v
}

/**
 * Checks a DKG document's shape, session, signer and Ed25519 signature: the signer must be the
 * member the body names (dealer or member). Curve points are decoded later, where they are used.
 */
/** Checks a signed document's Ed25519 signature: core verifyDocument, or a faster one (node:crypto) with the same contract. */
export type DocumentVerifier = (doc: Signed<unknown>) => boolean

export function parseDkgDocument (value: unknown, params: GroupParams, session: string, verify: DocumentVerifier = verifyDocument): DkgDocument {
  const d = obj(value, 'DKG document')
  const type = d.type
  if (typeof d.signer !== 'string' || typeof d.sig !== 'string') throw new CoreInputError('DKG document: signer and sig are required')
  const b = obj(d.body, 'DKG document body')
  if (b.session !== session) throw new CoreInputError('DKG document: another session (another group or DKG run)')
  // Dealers and recipients are the same members in a DKG; in a reshare the dealers are the old
  // group's members (deals, shares and complaints name them by their old index) and the recipients
  // the new group's (shares, responses and results name them by their new index).
  const dealers = dealersOf(params)
  const nd = dealers.length
  const n = params.members.length
  let who: number
  let signerList = params.members
  let body: DealBody | ShareBody | ResponsesBody | ResultBody
  switch (type) {
    case DKG_DEAL: {
      who = index(b.dealer, nd, 'deal.dealer')
      signerList = dealers
      if (!Array.isArray(b.commitments) || b.commitments.length !== params.threshold) throw new CoreInputError(`deal: commitments must list ${params.threshold} G2 points`)
      body = { session, dealer: who, commitments: b.commitments.map((c, k) => hex(c, 96, `deal.commitments[${k}]`)) }
      break
    }
    case DKG_SHARE:
      who = index(b.dealer, nd, 'share.dealer')
      signerList = dealers
      body = { session, dealer: who, recipient: index(b.recipient, n, 'share.recipient'), share: hex(b.share, 32, 'share.share') }
      break
    case DKG_RESPONSES: {
      who = index(b.member, n, 'responses.member')
      if (!Array.isArray(b.complaints) || b.complaints.length > nd) throw new CoreInputError(`responses: complaints must be a list of at most ${nd}`)
      const seen = new Set<number>()
      const complaints = b.complaints.map((c, i): Complaint => {
        const o = obj(c, `complaints[${i}]`)
        const dealer = index(o.dealer, nd, `complaints[${i}].dealer`)
        if (seen.has(dealer)) throw new CoreInputError(`responses: two complaints about dealer ${dealer}`)
        seen.add(dealer)
        if (o.kind === 'missing') return { dealer, kind: 'missing' }
        if (o.kind !== 'bad-share') throw new CoreInputError(`complaints[${i}].kind must be missing or bad-share`)
        const evidence = parseDkgDocument(o.evidence, params, session, verify)
        if (evidence.type !== DKG_SHARE) throw new CoreInputError(`complaints[${i}].evidence must be a share document`)
        const eb = evidence.body as ShareBody
        if (eb.dealer !== dealer || eb.recipient !== who) throw new CoreInputError(`complaints[${i}].evidence is not the share of dealer ${dealer} to member ${who}`)
        return { dealer, kind: 'bad-share', evidence: evidence as Signed<ShareBody> }
      })
      if (!Array.isArray(b.view) || b.view.length > 2 * nd) throw new CoreInputError(`responses: view must list at most ${2 * nd} deals`)
      const view = b.view.map((v, i) => {
        const deal = parseDkgDocument(v, params, session, verify)
        if (deal.type !== DKG_DEAL) throw new CoreInputError(`responses.view[${i}] must be a deal document`)
        return deal as Signed<DealBody>
      })
      body = { session, member: who, complaints, view }
      break
    }
    case DKG_RESULT: {
      who = index(b.member, n, 'result.member')
      if (!Array.isArray(b.qual) || b.qual.length > nd) throw new CoreInputError('result.qual must be a list of dealer indices')
      body = {
        session,
        member: who,
        qual: b.qual.map((q, i) => index(q, nd, `result.qual[${i}]`)),
        groupKey: hex(b.groupKey, 96, 'result.groupKey'),
        groupHash: hex(b.groupHash, 32, 'result.groupHash')
      }
      break
    }
    default:
      throw new CoreInputError(`unknown DKG document type ${JSON.stringify(String(type).slice(0, 40))}`)
  }
  if (d.signer !== signerList[who - 1]) throw new CoreInputError(`${String(type)}: signed by ${d.signer.slice(0, 16)}…, not by ${signerList === params.members ? 'member' : 'old member'} ${who}`)
  const doc = { type, signer: d.signer, body, sig: d.sig } as DkgDocument
  // The signature covers the body as received; re-encoding the parsed copy must give the same bytes.
  if (!verify(doc)) throw new CoreInputError(`${String(type)}: bad signature by member ${who}`)
  return doc
}
