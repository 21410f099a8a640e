import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS build for every importer (graphql 16 has no "exports", so
    // `import 'graphql'` finds "main"), and graphql-jit, loaded by Node here too, requires it.
    // Vite would pick the ES module build ("module") for our code: two copies of graphql, whose
    // types graphql-jit refuses as "from another realm". One copy, as in production.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Most test files wait on servers, databases and child processes rather than compute: three
    // at a time keep a 2-core machine busy (one at a time, vitest's default there, leaves it idle).
    maxWorkers: 3,
    // Memory tests collect garbage before they read the heap.
    execArgv: ['--expose-gc'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
