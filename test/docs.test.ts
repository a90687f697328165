// The docs speak only of this repository: every relative link of README.md and docs/*.md names a
// file that exists here, every repository path they quote in backticks exists, and no doc points
// to a document kept elsewhere.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'

const DOCS = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
]

/** Documents that live outside this repository and so may not be referred to. */
const ELSEWHERE =
  /ARCHITECTURE\.md|STYLE\.md|\.\.\/shared|behaviou?r\.md|behaviou?r reference|\bthe spec\b|\bspec (sections? )?\d|reference §|Precedence/i

/** `](target)` of inline links and images, outside code spans. */
function links(text: string): string[] {
  return [...text.replace(/`[^`\n]*`/g, '').matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!)
}

/** Backticked repository paths: `src/...`, `test/...`, `docs/...`, `scripts/...`, `bench/...`. */
function quotedPaths(text: string): string[] {
  return [...text.matchAll(/`((?:src|test|docs|scripts|bench)\/[\w./-]*)`/g)]
    .map((m) => m[1]!)
    .filter((p) => !/[<>*]/.test(p))
}

test('every relative link in the docs names a file of this repository', () => {
  const broken: string[] = []
  for (const doc of DOCS) {
    for (const target of links(readFileSync(doc, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue
      const path = join(dirname(doc), decodeURIComponent(target.split('#')[0]!))
      if (!existsSync(path)) broken.push(`${doc}: ${target}`)
    }
  }
  assert.deepEqual(broken, [])
})

test('every repository path the docs quote exists', () => {
  const missing: string[] = []
  for (const doc of DOCS) {
    for (const p of quotedPaths(readFileSync(doc, 'utf8'))) {
      // `bench/data/` is made by the benchmark, `dist-test/` by `npm test`; git ignores both.
      if (['bench/data', 'test/journey/generated', 'dist-test'].some((made) => p.startsWith(made))) continue
      if (!existsSync(p)) missing.push(`${doc}: ${p}`)
    }
  }
  assert.deepEqual(missing, [])
})

test('no doc refers to a document kept outside this repository', () => {
  const found: string[] = []
  for (const doc of DOCS) {
    readFileSync(doc, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (ELSEWHERE.test(line)) found.push(`${doc}:${i + 1}: ${line.trim()}`)
      })
  }
  assert.deepEqual(found, [])
})

test('the checks catch what they look for', () => {
  assert.deepEqual(links('see [a](docs/x.md#y), `[b](c.md)` and [web](https://e.org)'), [
    'docs/x.md#y',
    'https://e.org',
  ])
  assert.deepEqual(quotedPaths('in `src/app.ts` and `src/areas/<area>/`'), ['src/app.ts'])
  for (const s of [
    'see ARCHITECTURE.md',
    'in ../shared/spec',
    'the behaviour reference',
    'spec 2.1',
    'reference §3',
  ])
    assert.ok(ELSEWHERE.test(s), s)
})
