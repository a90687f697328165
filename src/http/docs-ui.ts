// The documentation UI (`/api/docs/`) in the product's name: its title, logo and icon are ours,
// and the schema it reads names the product's version.
import { constants } from 'node:zlib'
import type { FastifyInstance } from 'fastify'
import compress from '@fastify/compress'
import swaggerUi from '@fastify/swagger-ui'
import type { Config } from '../config.js'

const LOGO = (title: string, version: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="40" viewBox="0 0 320 40">` +
  `<rect x="0" y="4" width="32" height="32" rx="6" fill="#2f6f4f"/>` +
  `<path d="M8 28V12l8 8 8-8v16" stroke="#fff" stroke-width="3" fill="none"/>` +
  `<text x="42" y="27" font-family="sans-serif" font-size="18" fill="#fff">${title} ${version}</text></svg>`

const ICON =
  `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">` +
  `<rect width="32" height="32" rx="6" fill="#2f6f4f"/>` +
  `<path d="M8 24V8l8 8 8-8v16" stroke="#fff" stroke-width="3" fill="none"/></svg>`

/**
 * Compresses answers when the client asks for it (Accept-Encoding): JSON bodies above 1 KB, the
 * schema and the docs UI's assets. Off with `COMPRESSION=false`. Brotli runs at a middle quality:
 * its default (11) costs seconds on the UI's 1.5 MB bundle.
 */
export async function installCompression(app: FastifyInstance, config: Config): Promise<void> {
  if (!config.compression) return
  // Requests without a body have nothing to decompress: no decompression hook on their routes.
  app.addHook('onRoute', (route) => {
    const methods = ([] as string[]).concat(route.method)
    if (methods.every((m) => m === 'GET' || m === 'HEAD')) route.decompress = false
  })
  await app.register(compress, {
    global: true,
    threshold: 1024,
    encodings: ['br', 'gzip', 'deflate'],
    brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } },
    zlibOptions: { level: 6 },
  })
}

export async function installDocsUi(
  app: FastifyInstance,
  product: { title: string; version: string },
): Promise<void> {
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    uiConfig: { url: '/api/schema/' },
    // The policy @fastify/swagger-ui makes for its own files (scripts and styles from this server,
    // the hashes of its inline ones), less upgrade-insecure-requests: over plain HTTP that would
    // make the browser fetch the UI's own scripts over HTTPS, and the page would stay blank.
    staticCSP: true,
    transformStaticCSP: (header) => header.replace(/\s*upgrade-insecure-requests;?/, ''),
    logo: {
      type: 'image/svg+xml',
      content: Buffer.from(LOGO(product.title, product.version)),
      href: '/api/docs/',
    },
    theme: {
      title: `${product.title} ${product.version}`,
      favicon: [
        {
          filename: 'favicon.svg',
          rel: 'icon',
          sizes: 'any',
          type: 'image/svg+xml',
          content: Buffer.from(ICON),
        },
      ],
    },
  })
}
