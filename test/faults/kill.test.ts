// The full SIGKILL campaign: FAULT_KILLS kills per command (default 180),
// over FAULT_ROUNDS rounds, each round undone to start from the same plan.
import { killSuite } from './kill-suite.js';

killSuite('fault injection (full): SIGKILL mid-apply', { kills: 180, rounds: 18, orphans: 150, stale: 60, timeoutMs: 3_600_000 });
