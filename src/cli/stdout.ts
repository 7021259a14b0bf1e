let installed = false

/**
 * When whoever reads stdout goes away (`fairdeal log show … | head`), ends the process quietly
 * instead of with Node's unhandled EPIPE stack trace. The status is 141, what a shell reports for
 * a Unix filter killed by SIGPIPE: the output was not all delivered, so it must not read as success.
 */
export function quietOnClosedStdout (): void {
  if (installed) return
  installed = true
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(141)
    throw err
  })
}
