import { defineConfig } from 'vitest/config';

// The long property campaign on MariaDB (scripts/fuzz.mjs sets its size and seed).
export default defineConfig({
  test: {
    include: ['test/fuzz/**/*.fuzz.ts'],
    testTimeout: 24 * 3600_000,
    hookTimeout: 300_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
