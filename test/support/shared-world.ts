// The app a test file's tests share, with what the file builds on it once (its users, its
// organizations, a world of fixtures), made in one top-level `before` and closed in an `after`.
// One hook, because Node 20 starts a file's top-level `before` hooks as they are declared, without
// waiting for the one before: a second hook could not count on the app being built.
import { after, before } from 'node:test'
import { buildTestApp, type TestApp } from './app.js'

/** `t` and `world` are filled in from the file's first test on; call it at the file's top level. */
export function sharedTestWorld<W extends object>(
  build: (t: TestApp) => Promise<W>,
): { t: TestApp; world: W } {
  const t = {} as TestApp
  const world = {} as W
  before(async () => {
    Object.assign(t, await buildTestApp())
    Object.assign(world, await build(t))
  })
  after(() => t.close())
  return { t, world }
}
