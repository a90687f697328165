// The app a test file's tests share, with what the file builds on it once (its users, its
// organizations, a world of fixtures) kept apart from the app's own fields: `sharedTestApp` with a
// setup step, whose answer is `world`.
import { sharedTestApp } from './app.js'
import type { TestApp } from './app.js'

/** `t` and `world` are filled in from the file's first test on; call it at the file's top level. */
export function sharedTestWorld<W extends object>(
  build: (t: TestApp) => Promise<W>,
): { t: TestApp; world: W } {
  const world = {} as W
  const t = sharedTestApp(async (app) => {
    Object.assign(world, await build(app))
    return {}
  })
  return { t, world }
}
