// The Galera tier (npm run test:galera), on a cluster of its own: an apply
// killed with SIGKILL leaves its lease behind; a re-run started at once through
// another node, with the default lock_timeout, waits it out (issue 40 item 5).
import { galeraSuite } from './cases.js';

galeraSuite('Galera cluster (a killed run)', ['kill-run']);
