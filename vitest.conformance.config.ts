import { defineConfig } from 'vitest/config';

// Conformance tier: real Nova 26.2.2 (python3-nova) and ironic-api 21.4 (python3-ironic) against MariaDB.
export default defineConfig({
  test: {
    include: ['test/conformance/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});
