// Generates the TypeScript types of the reference's wire contract (test/contract/reference-openapi.json)
// with openapi-typescript, for the generated-client journey (test/journey/). The output is not
// committed: it is made on install (prepare), before type-checking and linting, and by the test
// runner, and again only when the schema, the generator or this script changes.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'

const SOURCE = 'test/contract/reference-openapi.json'
export const OUTPUT = 'test/journey/generated/reference-api.d.ts'

const require = createRequire(import.meta.url)
const generatorVersion = require('openapi-typescript/package.json').version
const schema = readFileSync(SOURCE)
const stamp = createHash('sha256')
  .update(schema)
  .update(generatorVersion)
  .update(readFileSync(new URL(import.meta.url)))
  .digest('hex')
const stampLine = `// stamp: ${stamp}`

function upToDate() {
  if (!existsSync(OUTPUT)) return false
  const head = readFileSync(OUTPUT, 'utf8').slice(0, 1000)
  return head.includes(stampLine)
}

if (!upToDate()) {
  const { default: openapiTS, astToString } = await import('openapi-typescript')
  const ts = (await import('typescript')).default
  const BLOB = ts.factory.createTypeReferenceNode('Blob')
  const NULL = ts.factory.createLiteralTypeNode(ts.factory.createNull())
  const ast = await openapiTS(JSON.parse(schema.toString('utf8')), {
    silent: true,
    // A file field (format: binary) is sent as a Blob in multipart form data, as the
    // reference's own TypeScript client does.
    transform(schemaObject) {
      if (schemaObject.format !== 'binary') return undefined
      return schemaObject.nullable ? ts.factory.createUnionTypeNode([BLOB, NULL]) : BLOB
    },
  })
  const header = [
    `// Generated from ${SOURCE} by scripts/generate-client.mjs with openapi-typescript ${generatorVersion}.`,
    '// Do not edit and do not commit: it is generated again whenever the schema changes.',
    stampLine,
    '',
  ].join('\n')
  mkdirSync(dirname(OUTPUT), { recursive: true })
  const tmp = `${OUTPUT}.${process.pid}.tmp`
  writeFileSync(tmp, header + astToString(ast))
  renameSync(tmp, OUTPUT)
}
