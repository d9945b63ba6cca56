// The full Galera tier (npm run test:galera): every case on a throw-away
// 3-node cluster. The fast subset is test/galera/galera-fast.test.ts.
import { galeraSuite } from './cases.js';

galeraSuite('Galera cluster (full tier)', ['two-applies', 'undo-elsewhere', 'writers', 'kill-node', 'non-primary']);
