// The full SIGKILL campaign on `compute_node rebalance`: a budget of
// FAULT_KILLS kills (default 150) over FAULT_ROUNDS rounds (default 15), each
// round undone to start from the same plan; a round ends early when its plan
// is done, so about 8 of its 10 land (128 in the run of docs/RELIABILITY.md).
// 4 × 40 ironic nodes: 440 planned changes per round.
import { killSuite } from './kill-suite.js';
import { createRebalanceDeployment, rebalanceTarget } from './rebalance-deployment.js';

killSuite('fault injection (full): SIGKILL mid-rebalance', {
  kills: 150,
  rounds: 15,
  timeoutMs: 3_600_000,
  create: async () => rebalanceTarget(await createRebalanceDeployment(40)),
});
