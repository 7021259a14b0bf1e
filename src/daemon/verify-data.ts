import { openLog, logDbPath } from '../store/log.js'
import { verifyLog, formatFailure, type PayloadVerifier } from '../core/log/index.js'

/** Re-verifies the whole receipt log of a (stopped) node's data directory. */
export async function verifyDataDir (dataDir: string, verifyPayload: PayloadVerifier): Promise<{ passed: number, failed: number, incomplete: number, failures: string[] }> {
  const log = await openLog({ path: logDbPath(dataDir), create: false, signer: null })
  try {
    const failures: string[] = []
    const verdict = await verifyLog(log.copy(), { verifyPayload, onFailure: f => failures.push(formatFailure(f)) })
    // An incomplete entry is listed among the failures: it is not a pass.
    return { passed: verdict.passed, failed: verdict.failed, incomplete: verdict.incomplete, failures }
  } finally {
    await log.close()
  }
}
