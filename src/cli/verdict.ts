import type { LogVerdict } from '../core/log/chain.js'

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
