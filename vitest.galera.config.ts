import { defineConfig } from 'vitest/config';

// The full Galera tier (npm run test:galera): throw-away 3-node MariaDB Galera
// clusters on 127.0.0.1 (test/galera/cluster.ts); needs galera-4 and rsync.
export default defineConfig({
  test: {
    include: ['test/galera/**/*.test.ts'],
    // The fast subsets run in npm test (vitest.config.ts).
    exclude: ['test/galera/*-fast.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default'],
  },
});
