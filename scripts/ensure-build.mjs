// Compiles src/ to dist/ when any source file is newer than the last build, so `npm start`
// runs plain JavaScript (fast start) and never stale code.
//
// An install without dev dependencies (`npm ci --omit=dev`, the container image) has no compiler:
// there the built tree in dist/ is what runs, and it is used as it is. Without a compiler and
// without a build, the install cannot run: say so.
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

function compiler() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc')
  } catch {
    return null
  }
}

const tsc = compiler()
if (!tsc) {
  if (existsSync(stamp)) process.exit(0)
  console.error(
    'dist/ is not built and the TypeScript compiler is not installed: run `npm ci` (with dev dependencies), then `npm run build`',
  )
  process.exit(1)
}
const sourceTime = Math.max(
  newest('src'),
  statSync('tsconfig.json').mtimeMs,
  statSync('tsconfig.build.json').mtimeMs,
)
if (!existsSync(stamp) || statSync(stamp).mtimeMs < sourceTime) {
  const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status ?? 1)
  writeFileSync(stamp, new Date().toISOString())
}
