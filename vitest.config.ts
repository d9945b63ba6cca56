import { defineConfig } from 'vitest/config';

// The default tier: unit (pure), db (SQLite + MariaDB), cli (the built
// binary) and package (HEAD exported alone, packed and installed). The conformance tier has its own config because it needs the real
// Nova installed (vitest.conformance.config.ts).
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/db/**/*.test.ts', 'test/cli/**/*.test.ts', 'test/package/**/*.test.ts', 'test/property/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
