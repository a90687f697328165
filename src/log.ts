// The log of a process outside a request: the cluster's primary, commands, and a fatal error.
// The same JSON lines (pino) as the server's request log, so one stream carries everything.
import { pino, type Logger } from 'pino'

export function processLogger(level = process.env.LOG_LEVEL || 'info'): Logger {
  return pino({ level })
}
