import { defineConfig } from 'vitest/config';

// The default tier: unit (pure), db (SQLite + MariaDB), cli (the built
// binary), package (HEAD exported alone, packed and installed), the property
// campaign's fast run, and the fast subsets of the fault and Galera tiers
// (test/faults/*-fast, test/galera/*-fast; their full tiers have own configs). The conformance tier has its own config because it needs the real
// Nova installed (vitest.conformance.config.ts).
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/db/**/*.test.ts', 'test/cli/**/*.test.ts', 'test/package/**/*.test.ts', 'test/property/**/*.test.ts', 'test/faults/*-fast.test.ts', 'test/galera/*-fast.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
