// Free loopback ports for what a process starts on this machine (a local table, a local beacon
// group): an adapter (Node only), below the daemon, so that the beacon group may use it too.
import { createServer } from 'node:net'

/** Whether `port` can be listened on at 127.0.0.1 right now (found by binding it). */
export async function isPortFree (port: number): Promise<boolean> {
  return await new Promise<boolean>(resolve => {
    const server = createServer()
    server.once('error', () => { resolve(false) })
    server.listen(port, '127.0.0.1', () => { server.close(() => { resolve(true) }) })
  })
}

/**
 * A free loopback port below Linux's ephemeral range (32768+), so that no outgoing connection made
 * between now and the node's start can take it. Random, so that tables set up side by side rarely
 * collide.
 */
export async function freeLoopbackPort (): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    if (await isPortFree(port)) return port
  }
  throw new Error('no free loopback port found between 20000 and 31999')
}
