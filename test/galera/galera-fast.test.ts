// The Galera tier's fast subset, in `npm test`: two applies through two nodes
// of a throw-away 3-node cluster, and an undo through a third node. Skipped
// loudly without galera-4 (required with CI=true). The rest: npm run test:galera.
import { galeraSuite } from './cases.js';

galeraSuite('Galera cluster (fast subset)', ['two-applies', 'undo-elsewhere']);
