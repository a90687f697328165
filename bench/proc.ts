// What the benchmark reads from /proc (Linux): the CPU time and resident memory of the server's
// processes (one, or a cluster's primary and its workers) and the CPU time of PostgreSQL's.
import { spawnSync } from 'node:child_process'
import { createServer } from 'node:net'
import { readdirSync, readFileSync } from 'node:fs'

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

/** The fields of a /proc stat line after the command name: [0] is the state, [1] the parent. */
function statFields(path: string): { comm: string; fields: string[] } | null {
  try {
    const stat = readFileSync(path, 'utf8')
    const close = stat.lastIndexOf(')')
    return {
      comm: stat.slice(stat.indexOf('(') + 1, close),
      fields: stat.slice(close + 2).split(' '),
    }
  } catch {
    return null
  }
}

/** CPU seconds used so far (user and system) by a process, or by one of its threads. */
export function cpuSeconds(pid: number, thread?: number): number {
  const s = statFields(thread ? `/proc/${pid}/task/${thread}/stat` : `/proc/${pid}/stat`)
  return s ? (Number(s.fields[11]) + Number(s.fields[12])) / CLOCK_TICKS : 0
}

export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const m = /VmRSS:\s+(\d+) kB/.exec(status)
    return m ? Number(m[1]) / 1024 : 0
  } catch {
    return 0
  }
}

function processIds(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
}

/** The server's processes: the one started, and the processes it forked (a cluster's workers). */
export function serverProcesses(pid: number): number[] {
  const children = processIds().filter((p) => statFields(`/proc/${p}/stat`)?.fields[1] === String(pid))
  return [pid, ...children]
}

/**
 * CPU seconds used so far by each PostgreSQL process of the machine (postmaster, backends and
 * background processes: the processes whose command name starts with "postgres"), by process id.
 */
export function postgresCpu(): Map<number, number> {
  const cpu = new Map<number, number>()
  for (const p of processIds()) {
    const s = statFields(`/proc/${p}/stat`)
    if (s?.comm.startsWith('postgres'))
      cpu.set(p, (Number(s.fields[11]) + Number(s.fields[12])) / CLOCK_TICKS)
  }
  return cpu
}

/**
 * The CPU seconds PostgreSQL's processes used between two readings: a process in both, the
 * difference; one started in between, all of it. One that ended in between is not counted (the
 * server keeps its pool's connections open for the whole run).
 */
export function postgresCpuBetween(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0
  for (const [pid, seconds] of after) sum += seconds - (before.get(pid) ?? 0)
  return sum
}

/** A loopback port free now, for a server to be started on. */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const a = s.address() as { port: number }
      s.close(() => resolve(a.port))
    })
  })
}

/** The Node.js flags `npm start` gives the server (package.json), so that it runs here as deployed. */
export function startFlags(): string[] {
  const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> })
    .scripts
  const flags = /\bexec node (.*?)dist\/main\.js serve/.exec(scripts.start ?? '')
  if (!flags) throw new Error('package.json: the start script does not run node dist/main.js serve')
  return flags[1]!.split(' ').filter(Boolean)
}
