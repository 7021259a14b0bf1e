import { CoreInputError } from '../errors.js'
import type { Signed } from '../signed.js'
import { parseDkgDocument, DKG_RESULT, type DocumentVerifier, type ResultBody } from './dkg-documents.js'
import { groupSession, parseGroupParams } from './group-params.js'
import { verifyDkgResult, type DkgOutcome, type DkgResult } from './dkg.js'

/** One transcript (a member's `transcript.json`) and the signed results its member kept beside it. */
export interface AgreementInput {
  /** Where it came from, for messages (a file name). */
  label: string
  result: Pick<DkgResult, 'transcript' | 'qual' | 'groupKey' | 'groupHash' | 'chainInfo' | 'commitments'> & { index?: number }
  /** Other members' signed `beacon-group/result` documents (`results.json`), if kept. */
  results?: unknown[]
}

export interface Disagreement {
  /** What disagrees with the first transcript's outcome. */
  source: string
  /** The member index, when a signed result names it. */
  member?: number
  reason: string
}

export interface AgreementOutcome {
  outcome: DkgOutcome
  /** Member indices whose signed result (or transcript) matches `outcome`. */
  agreeing: number[]
  disagreements: Disagreement[]
}

/**
 * Whether several members computed the same group: each transcript is re-verified on its own
 * (verifyDkgResult; a transcript that does not verify throws), all must be of the same session,
 * and their qualified set, group key and groupHash must be the first one's; every signed result
 * kept beside a transcript (checked against the group's member keys) must say the same. Any
 * difference is a disagreement: two honest members holding two keys means no round can be trusted
 * to come, and the group must be rebuilt.
 */
export function checkDkgAgreement (inputs: AgreementInput[], verify: DocumentVerifier): AgreementOutcome {
  if (inputs.length === 0) throw new CoreInputError('no transcript to check')
  const outcomes = inputs.map(i => {
    try { return verifyDkgResult(i.result, verify) } catch (err) { throw new CoreInputError(`${i.label}: ${(err as Error).message}`) }
  })
  const params = parseGroupParams(inputs[0].result.transcript.params)
  const session = groupSession(params)
  const first = outcomes[0]
  const disagreements: Disagreement[] = []
  const agreeing = new Set<number>()
  const differs = (o: { qual: number[], groupKey: string, groupHash: string }): string | undefined => {
    if (o.groupKey !== first.groupKey) return `group key ${o.groupKey.slice(0, 16)}… differs from ${first.groupKey.slice(0, 16)}… (qualified ${o.qual.join(',')} against ${first.qual.join(',')})`
    if (o.qual.join(',') !== first.qual.join(',')) return `qualified set ${o.qual.join(',')} differs from ${first.qual.join(',')}`
    if (o.groupHash !== first.groupHash) return `groupHash ${o.groupHash} differs from ${first.groupHash}`
    return undefined
  }
  inputs.forEach((input, k) => {
    const s = groupSession(parseGroupParams(input.result.transcript.params))
    if (s !== session) throw new CoreInputError(`${input.label}: a transcript of another group or DKG run (session ${s}, not ${session})`)
    const why = differs(outcomes[k])
    if (why !== undefined) disagreements.push({ source: input.label, member: input.result.index, reason: why })
    else if (input.result.index !== undefined) agreeing.add(input.result.index)
    for (const raw of input.results ?? []) {
      let doc: Signed<ResultBody>
      try {
        const parsed = parseDkgDocument(raw, params, session, verify)
        if (parsed.type !== DKG_RESULT) throw new CoreInputError(`a ${parsed.type} document among the results`)
        doc = parsed as Signed<ResultBody>
      } catch (err) {
        throw new CoreInputError(`${input.label}: results: ${(err as Error).message}`)
      }
      const whyR = differs(doc.body)
      if (whyR !== undefined) disagreements.push({ source: `${input.label}: member ${doc.body.member}'s signed result`, member: doc.body.member, reason: whyR })
      else agreeing.add(doc.body.member)
    }
  })
  return { outcome: first, agreeing: [...agreeing].sort((a, b) => a - b), disagreements }
}
