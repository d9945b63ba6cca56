import { defineConfig } from 'vitest/config';

// The default tier: unit (pure), db (SQLite + MariaDB) and cli (the built
// binary). The conformance tier has its own config because it needs the real
// Nova installed (vitest.conformance.config.ts).
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/db/**/*.test.ts', 'test/cli/**/*.test.ts', 'test/property/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
