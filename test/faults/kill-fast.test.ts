// The fast subset of the SIGKILL campaign (test/faults/kill.test.ts runs the full one).
import { killSuite } from './kill-suite.js';

killSuite('fault injection (fast): SIGKILL mid-apply', { kills: 2, rounds: 1, orphans: 80, stale: 30, timeoutMs: 120_000 });
