// The benchmark's printed results: a table per database and the budgets checked against it.

/** One load of one scenario against one server. */
export interface Round {
  rps: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  rssMb: number
  /** The peak RSS of the largest server process (a cluster's worker), in MB. */
  largestRssMb: number
  /** Server CPU time per request, in microseconds: the whole process, and its main thread. */
  cpuUs: number
  mainCpuUs: number
  /** PostgreSQL's CPU time per request, in microseconds (null on SQLite). */
  pgCpuUs: number | null
}

/** A scenario's rounds: the medians of the server's, and the bare stack's beside them. */
export interface Result extends Round {
  scenario: string
  /** Each round's requests/s. */
  roundRps: number[]
  bare: {
    rps: number
    cpuUs: number
    errors: number
    /** The median of the rounds' ratios (the server's rate over the bare stack's right after). */
    ratio: number
    roundRatios: number[]
  }
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length === 0 ? 0 : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** How a run was made, for the table's title. */
export interface RunShape {
  orders: number
  workers: number
  connections: number
  duration: number
  rounds: number
}

export function table(db: string, results: Result[], run: RunShape): string[] {
  const { orders, workers, connections, duration, rounds } = run
  const pg = results.some((r) => r.pgCpuUs !== null)
  const limitItem = results.find((r) => r.scenario === 'limit: item body')?.rps ?? 0
  const limitPage = results.find((r) => r.scenario === 'limit: 10-row page body')?.rps ?? 0
  const lines = [
    `\n${db}: ${orders.toLocaleString('en')} orders, ${workers} server process${workers > 1 ? 'es' : ''}, ${connections} connections, ${duration}s per scenario and server, ${rounds} round${rounds > 1 ? 's' : ''} alternating the server and the bare stack (medians)`,
    `| scenario | req/s | p50 ms | p99 ms | ratio to bare (rounds) | ratio to limit | peak RSS MB | errors | server CPU µs/req (main thread) | bare CPU µs/req |${pg ? ' PostgreSQL CPU µs/req |' : ''}`,
    `|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|${pg ? '---:|' : ''}`,
  ]
  for (const r of results) {
    const isPage = /list|page/.test(r.scenario)
    const limit = isPage ? limitPage : limitItem
    const ratio = limit ? r.rps / limit : 0
    const rounds =
      r.bare.roundRatios.length > 1 ? ` (${r.bare.roundRatios.map((x) => x.toFixed(2)).join(', ')})` : ''
    lines.push(
      `| ${r.scenario} | ${Math.round(r.rps)} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.bare.ratio.toFixed(2)}${rounds} | ${(ratio * 100).toFixed(0)}% | ${r.rssMb.toFixed(0)} | ${r.errors + r.non2xx} | ${r.cpuUs.toFixed(0)} (${r.mainCpuUs.toFixed(0)}) | ${r.bare.cpuUs.toFixed(0)} |${pg ? ` ${r.pgCpuUs?.toFixed(0) ?? ''} |` : ''}`,
    )
  }
  return lines
}

/**
 * The budgets, checked against one run. Against the bare stack: retrieve ≥ 0.40 on SQLite and
 * ≥ 0.30 on PostgreSQL, the staff and member lists ≥ 0.30 and ≥ 0.20. SQLite: retrieve ≥ 50% of the item limit and p99 < 10 ms,
 * every list ≥ 25% of the page limit and p99 < 25 ms, create and approve ≥ 2,000/s. PostgreSQL
 * (the scale path, measured with one and with several server processes): retrieve ≥ 30%, every
 * list ≥ 20%, create ≥ 1,000/s, approve ≥ 2,000/s, p99 < 25 ms in every scenario. The server's
 * RSS stays under 200 MB a process on both.
 */
export function budgets(results: Result[], postgres = false): string[] {
  const limitItem = results.find((r) => r.scenario === 'limit: item body')?.rps ?? 0
  const limitPage = results.find((r) => r.scenario === 'limit: 10-row page body')?.rps ?? 0
  const out: string[] = [`budgets (${postgres ? 'PostgreSQL' : 'SQLite'}):`]
  const check = (ok: boolean, text: string) => out.push(`  ${ok ? 'met   ' : 'MISSED'} ${text}`)
  const share = (r: Result, limit: number, least: number) =>
    check(
      r.rps >= least * limit,
      `${r.scenario}: ≥ ${least * 100}% of limit (${((r.rps / limit) * 100).toFixed(0)}%)`,
    )
  const p99 = (r: Result, most: number) =>
    check(r.p99 < most, `${r.scenario}: p99 < ${most} ms (${r.p99} ms)`)
  const bare = (r: Result, least: number) =>
    check(
      r.bare.ratio >= least,
      `${r.scenario}: ≥ ${least.toFixed(2)} of the bare stack (${r.bare.ratio.toFixed(2)})`,
    )
  for (const r of results) {
    if (r.scenario.startsWith('limit')) continue
    if (r.scenario === 'retrieve one order') bare(r, postgres ? 0.3 : 0.4)
    else if (r.scenario === 'list orders (staff)' || r.scenario === 'list orders (project member)')
      bare(r, postgres ? 0.2 : 0.3)
  }
  for (const r of results) {
    if (r.scenario.startsWith('limit')) continue
    if (r.scenario === 'retrieve one order') {
      share(r, limitItem, postgres ? 0.3 : 0.5)
      p99(r, postgres ? 25 : 10)
    } else if (r.scenario.startsWith('list')) {
      share(r, limitPage, postgres ? 0.2 : 0.25)
      p99(r, 25)
    } else if (r.scenario.startsWith('create') || r.scenario.startsWith('approve')) {
      const least = postgres && r.scenario.startsWith('create') ? 1000 : 2000
      check(r.rps >= least, `${r.scenario}: ≥ ${least}/s (${Math.round(r.rps)}/s)`)
      if (postgres) p99(r, 25)
    } else if (postgres) {
      p99(r, 25)
    }
  }
  const peak = Math.max(...results.map((r) => r.largestRssMb))
  check(peak < 200, `server RSS < 200 MB a process (peak ${peak.toFixed(0)} MB)`)
  return out
}
