import { defineConfig } from 'vitest/config';

// The full fault-injection tier (npm run test:faults): SIGKILL campaigns and
// connection loss against MariaDB. FAULT_KILLS sets the kills per command.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    // The fast subsets run in npm test (vitest.config.ts).
    exclude: ['test/faults/*-fast.test.ts'],
    testTimeout: 3_600_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 1,
    reporters: ['default'],
  },
});
