import { summaryLine, type LogVerdict } from '../core/log/chain.js'

/**
 * What `verify` and `log show` exit with: 0 everything passed; 1 something failed (a forgery, a
 * broken chain, a bad signature: trust nothing the log says past it); 3 nothing failed but some
 * receipts lack a seat's countersignature (a seat was away when its hand ended): every entry that
 * is there is genuine, the log is just not complete. 2 stays a usage or input error.
 */
export const EXIT_INCOMPLETE = 3

export function verdictExitCode (verdict: Pick<LogVerdict, 'failed' | 'incomplete'>): number {
  if (verdict.failed > 0) return 1
  return verdict.incomplete > 0 ? EXIT_INCOMPLETE : 0
}

/** The summary line; when nothing failed but some hands are incomplete, it says so in words. */
export function verdictSummary (verdict: Pick<LogVerdict, 'passed' | 'failed' | 'incomplete'>): string {
  const counts = summaryLine(verdict)
  if (verdict.failed === 0 && verdict.incomplete > 0) {
    return `${counts}: nothing failed; ${verdict.incomplete} ${verdict.incomplete === 1 ? 'hand is' : 'hands are'} not countersigned by every seat`
  }
  return counts
}
