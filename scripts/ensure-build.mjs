// Compiles src/ to dist/ when any source file is newer than the last build, so `npm start`
// runs plain JavaScript (fast start) and never stale code.
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'

const stamp = 'dist/.build-stamp'

function newest(dir) {
  let t = 0
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    const s = statSync(p)
    t = Math.max(t, s.isDirectory() ? newest(p) : s.mtimeMs)
  }
  return t
}

const sourceTime = Math.max(newest('src'), statSync('tsconfig.json').mtimeMs, statSync('tsconfig.build.json').mtimeMs)
if (!existsSync(stamp) || statSync(stamp).mtimeMs < sourceTime) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status ?? 1)
  writeFileSync(stamp, new Date().toISOString())
}
