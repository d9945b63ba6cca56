// The fast subset of the SIGKILL campaign (test/faults/kill.test.ts runs the full one).
import { killSuite } from '../faults/kill-suite.js';

killSuite('fault injection (fast): SIGKILL mid-apply', { kills: 3, rounds: 1, orphans: 150, stale: 50, timeoutMs: 60_000 });
