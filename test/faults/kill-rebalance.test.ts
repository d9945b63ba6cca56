// The full SIGKILL campaign on `compute_node rebalance`: FAULT_KILLS kills
// (default 100) over FAULT_ROUNDS rounds (default 10), each round undone to
// start from the same plan. 4 × 40 ironic nodes: about 560 planned changes.
import { killSuite } from './kill-suite.js';
import { createRebalanceDeployment, rebalanceTarget } from './rebalance-deployment.js';

killSuite('fault injection (full): SIGKILL mid-rebalance', {
  kills: 100,
  rounds: 10,
  timeoutMs: 3_600_000,
  create: async () => rebalanceTarget(await createRebalanceDeployment(40)),
});
