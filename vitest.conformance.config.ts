import { defineConfig } from 'vitest/config';

// Conformance tier: real Nova 26.2.2 (python3-nova) and ironic-api 21.4 (python3-ironic) against MariaDB.
export default defineConfig({
  test: {
    include: ['test/conformance/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Two files at a time: each creates its own randomly named databases and
    // takes free ports for ironic-api and keystone, and most of the time is
    // nova-manage's Python start-up, one core each. 263 s against 416 s for
    // one at a time on the 2-core machine (2026-12-04).
    maxWorkers: 2,
    fileParallelism: true,
  },
});
