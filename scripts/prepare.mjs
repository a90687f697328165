// Runs on every `npm ci`/`npm install` of this tree: builds dist/ and generates the test client's
// types. An install without dev dependencies (`npm ci --omit=dev` of a built tree) has neither the
// compiler nor the generator, and needs neither: it runs the dist/ it was given.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
function installed(name) {
  try {
    require.resolve(`${name}/package.json`)
    return true
  } catch {
    return false
  }
}

const run = (script) => {
  const r = spawnSync(process.execPath, [script], { stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status ?? 1)
}
run('scripts/ensure-build.mjs')
if (installed('openapi-typescript') && installed('typescript')) run('scripts/generate-client.mjs')
