// How a test runs the program's own command line (`serve`, `migrate`, `seed-demo`, ...) in a child
// process. `npm test` builds dist/ first (scripts/run-tests.mjs) and says so in TEST_MAIN_BUILT:
// children then run the compiled program, as `npm start` and `npm run cli` do, and start in about
// half the time and CPU of compiling the sources through tsx. A test file run on its own (node
// --import tsx --test ...) runs the sources, so that it never tests a stale build. A child given a
// TypeScript module to preload runs the sources too: the module patches the sources' modules.

/** node's arguments for `main` with `args`, `nodeArgs` (node's own options) before the script. */
export function mainCommand(args: string[], nodeArgs: string[] = []): string[] {
  const preloadsTypeScript = nodeArgs.some((a) => a.endsWith('.ts'))
  if (process.env.TEST_MAIN_BUILT === '1' && !preloadsTypeScript) {
    return [...nodeArgs, 'dist/main.js', ...args]
  }
  return ['--import', 'tsx', ...nodeArgs, 'src/main.ts', ...args]
}
