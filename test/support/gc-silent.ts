// For the scripts run with `node --expose-gc --import tsx` that hold a call to a peer that never
// answers under garbage collection (gc-silent-delivery.ts, gc-silent-broker.ts): the silent
// listener, collections all along, and the exit (2, "still waiting") when a call does not end.
import { createServer, type Socket } from 'node:net'

export interface SilentPeer {
  port: number
  /** Stops the collections and the give-up timer, and closes the listener and its connections. */
  end(): void
}

/** A listener that accepts connections and never answers; gives up after `giveUpMs`. */
export async function silentPeer(giveUpMs: number): Promise<SilentPeer> {
  const sockets: Socket[] = []
  const silent = createServer((s) => void sockets.push(s))
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) throw new Error('run with --expose-gc')
  const collecting = setInterval(gc, 5)
  const giveUp = setTimeout(() => {
    console.log('still waiting')
    process.exit(2)
  }, giveUpMs)
  return {
    port: (silent.address() as { port: number }).port,
    end() {
      clearTimeout(giveUp)
      clearInterval(collecting)
      sockets.forEach((s) => s.destroy())
      silent.close()
    },
  }
}
