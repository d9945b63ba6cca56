import { defineConfig } from 'vitest/config';

// The clients tier (npm run test:clients): the real ansible-core, Puppet,
// systemd-analyze and promtool of Debian 12 (scripts/install-clients.sh) run
// contrib/ and the README's automation examples, on MariaDB and the sandbox.
export default defineConfig({
  test: {
    include: ['test/clients/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
