// A TypeScript client generated from our own /api/schema/ (openapi-typescript) has the named record
// types and typed operations: a small program using the `Order` type and the order list's query
// parameters compiles with `tsc --strict`, and a misuse does not.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'
import openapiTS, { astToString } from 'openapi-typescript'
import { buildTestApp, type TestApp } from '../support/app.js'

let t: TestApp
let dir: string
before(async () => {
  t = await buildTestApp()
  dir = mkdtempSync(join(tmpdir(), 'generated-client-'))
  const doc = (await t.app.inject({ url: '/api/schema/' })).json()
  writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(doc, { silent: true })))
})
after(async () => {
  await t.close()
  rmSync(dir, { recursive: true, force: true })
})

function compile(program: string): string[] {
  const file = join(dir, `program-${Math.random().toString(36).slice(2)}.ts`)
  writeFileSync(file, program)
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [],
    lib: ['lib.es2022.d.ts'],
  }
  const p = ts.createProgram([file], options)
  return ts.getPreEmitDiagnostics(p).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
}

const PROGRAM = `
import type { components, operations, paths } from './api'

type Order = components['schemas']['Order']
type ListQuery = NonNullable<operations['marketplace_orders_list']['parameters']['query']>

export function describe(order: Order): string {
  // Every field of a record is required: no optional chaining needed.
  const state: string = order.state
  const uuid: string = order.uuid
  return \`\${uuid} \${state}\`
}

export const query: ListQuery = { page_size: 20, can_approve_as_consumer: true, project_uuid: 'x' }
export type Approve = paths['/api/marketplace-orders/{uuid}/approve_by_consumer/']['post']
`

test('a program using the generated Order type compiles with --strict', () => {
  assert.deepEqual(compile(PROGRAM), [])
})

test('the generated types are not loose: a wrongly typed use fails to compile', () => {
  const errors = compile(`
import type { components, operations } from './api'
type ListQuery = NonNullable<operations['marketplace_orders_list']['parameters']['query']>
export const query: ListQuery = { page_size: 'twenty' }
export const n: number = ({} as components['schemas']['Order']).uuid
`)
  assert.equal(errors.length, 2, errors.join('\n'))
})
