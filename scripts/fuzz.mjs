#!/usr/bin/env node
// npm run test:fuzz -- [--runs N] [--seed S] [--max-events N] [--path P]
// The long property campaign on MariaDB (TEST_MYSQL_URL, default
// root@127.0.0.1:3306). A failure prints the shrunk history with the seed and
// path that replay it: npm run test:fuzz -- --seed S --path P
import { spawnSync } from 'node:child_process';

const usage = 'usage: npm run test:fuzz -- [--runs N] [--seed S] [--max-events N] [--path P]';
const names = { '--runs': 'FUZZ_RUNS', '--seed': 'FUZZ_SEED', '--max-events': 'FUZZ_MAX_EVENTS', '--path': 'FUZZ_PATH' };
const env = { ...process.env };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i += 2) {
  const name = names[args[i]];
  const value = args[i + 1];
  if (name === undefined || value === undefined) {
    console.error(usage);
    process.exit(127);
  }
  if (name !== 'FUZZ_PATH' && !/^[0-9]+$/.test(value)) {
    console.error(`${args[i]} must be a non-negative integer, got '${value}'\n${usage}`);
    process.exit(127);
  }
  env[name] = value;
}
const r = spawnSync('npx', ['vitest', 'run', '--config', 'vitest.fuzz.config.ts'], { stdio: 'inherit', env });
process.exit(r.status ?? 1);
