// The fast subset of the rebalance SIGKILL campaign (test/faults/kill-rebalance.test.ts runs the full one).
import { killSuite } from '../faults/kill-suite.js';
import { createRebalanceDeployment, rebalanceTarget } from '../faults/rebalance-deployment.js';

killSuite('fault injection (fast): SIGKILL mid-rebalance', {
  kills: 3,
  rounds: 1,
  timeoutMs: 120_000,
  create: async () => rebalanceTarget(await createRebalanceDeployment(12, 'rbf')),
});
