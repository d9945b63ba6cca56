// Row writers shared by the sandbox, the tests and the benchmark. Each one
// inserts a row the way Nova or Placement itself writes it, so that the tool
// is exercised against data it will meet in a real deployment:
//
// - every NOT NULL column is filled, and `deleted = 0` / `mapped = 0` are
//   written explicitly: the DDL defaults are NULL, and NULL rows are invisible
//   to Nova (`deleted = 0`, `mapped < 1`);
// - timestamps are naive UTC 'YYYY-MM-DD HH:MM:SS' strings; created_at is set
//   and updated_at is what Nova leaves there (NULL on a bare insert, the last
//   save otherwise);
// - JSON columns hold what Nova's jsonutils.dumps produces (Python spacing);
// - allocation ratios are never NULL or 0.0, because loading such a compute
//   node makes nova-manage write to it (nova-facts §1.3), which would make the sandbox
//   differ from itself between a nova-manage run and ours.
//
// Every writer takes a Knex or a Knex.Transaction and returns ids. The
// multi-row variants insert in chunks, for the benchmark's large clouds.
export { INSERT_CHUNK, pythonJson } from './rows/common.js';
export * from './rows/api.js';
export * from './rows/cell.js';
export * from './rows/placement.js';
