// A STOMP 1.2 consumer over WebSocket that connects and subscribes as the reference's site agent
// does: virtual host in the `host` header, login the subscription's uuid hex, passcode the agent's
// API token, `SUBSCRIBE` to `/amq/queue/<queue>` with `ack: auto`. Messages are kept in arrival
// order; `take(n)` waits (bounded by a timer) until n more have arrived.
import { WebSocket } from 'undici'

export interface StompMessage {
  headers: Record<string, string>
  body: string
  /** When the frame arrived (Date.now()). */
  receivedAt: number
}

export class StompConsumer {
  readonly messages: StompMessage[] = []
  private taken = 0
  private buffer = ''
  private waiters: (() => void)[] = []
  private closed = false
  error: string | null = null

  private constructor(private readonly ws: WebSocket) {}

  static async connect(
    url: string,
    o: { vhost: string; login: string; passcode: string; queue: string; timeoutMs?: number },
  ): Promise<StompConsumer> {
    const ws = new WebSocket(url, ['v12.stomp'])
    const c = new StompConsumer(ws)
    const timeoutMs = o.timeoutMs ?? 5000
    await new Promise<void>((resolve, reject) => {
      const fail = (message: string) => {
        clearTimeout(timer)
        ws.close()
        reject(new Error(message))
      }
      const timer = setTimeout(() => fail(`STOMP: no CONNECTED within ${timeoutMs} ms`), timeoutMs)
      ws.onerror = () => fail('STOMP: WebSocket error')
      ws.onclose = () => {
        c.closed = true
        clearTimeout(timer)
        reject(new Error(`STOMP: closed before CONNECTED${c.error ? `: ${c.error}` : ''}`))
        c.notify()
      }
      ws.onmessage = (ev) => {
        c.receive(String(ev.data), () => {
          clearTimeout(timer)
          resolve()
        })
        if (c.error) fail(`STOMP: refused: ${c.error}`)
      }
      ws.onopen = () => {
        c.send('CONNECT', {
          'accept-version': '1.2',
          host: o.vhost,
          login: o.login,
          passcode: o.passcode,
          'heart-beat': '0,0',
        })
      }
    })
    ws.onclose = () => {
      c.closed = true
      c.notify()
    }
    c.send('SUBSCRIBE', { id: o.queue, destination: `/amq/queue/${o.queue}`, ack: 'auto' })
    return c
  }

  private send(command: string, headers: Record<string, string>, body = ''): void {
    const lines = Object.entries(headers).map(([k, v]) => `${k}:${v}`)
    this.ws.send(`${command}\n${lines.join('\n')}\n\n${body}\0`)
  }

  private receive(data: string, onConnected: () => void): void {
    this.buffer += data
    let end: number
    while ((end = this.buffer.indexOf('\0')) >= 0) {
      const raw = this.buffer.slice(0, end).replace(/^[\r\n]+/, '')
      this.buffer = this.buffer.slice(end + 1)
      if (!raw) continue
      const split = raw.indexOf('\n\n')
      const head = split >= 0 ? raw.slice(0, split) : raw
      const body = split >= 0 ? raw.slice(split + 2) : ''
      const [command, ...lines] = head.split('\n')
      const headers: Record<string, string> = {}
      for (const l of lines) {
        const i = l.indexOf(':')
        if (i > 0 && !(l.slice(0, i) in headers)) headers[l.slice(0, i)] = l.slice(i + 1)
      }
      if (command === 'CONNECTED') onConnected()
      else if (command === 'MESSAGE') this.messages.push({ headers, body, receivedAt: Date.now() })
      else if (command === 'ERROR') this.error = `${headers.message ?? ''} ${body}`.trim()
      this.notify()
    }
  }

  private notify(): void {
    const w = this.waiters
    this.waiters = []
    for (const f of w) f()
  }

  /** The next `n` messages' bodies (parsed JSON), waiting at most `timeoutMs` for them. */
  async take(n: number, timeoutMs = 5000): Promise<unknown[]> {
    const want = this.taken + n
    if (this.messages.length < want) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(
            new Error(
              `STOMP: ${this.messages.length - this.taken} of ${n} message(s) within ${timeoutMs} ms` +
                (this.error ? ` (error: ${this.error})` : ''),
            ),
          )
        }, timeoutMs)
        const check = () => {
          if (this.messages.length >= want || this.closed) {
            clearTimeout(timer)
            if (this.messages.length >= want) resolve()
            else reject(new Error(`STOMP: connection closed${this.error ? `: ${this.error}` : ''}`))
          } else this.waiters.push(check)
        }
        check()
      })
    }
    const out = this.messages.slice(this.taken, want).map((m) => JSON.parse(m.body) as unknown)
    this.taken = want
    return out
  }

  /** Messages that arrived and were not taken yet. */
  get pending(): number {
    return this.messages.length - this.taken
  }

  close(): void {
    if (!this.closed) {
      try {
        this.send('DISCONNECT', {})
      } catch {
        // already gone
      }
      this.ws.close()
    }
  }
}
