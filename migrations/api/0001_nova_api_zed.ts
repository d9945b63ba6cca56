// The three Nova API database tables the tool uses, as Nova 26.2.2 (Zed,
// alembic head b30f573d3377) creates them. Tests, the sandbox and the
// benchmark run on these, so they must behave like the real ones: see
// test/db/schema-migrations.test.ts, which compares them with
// reference/nova-zed-schema/nova_api.sql.
import type { Knex } from 'knex';
import { dialectOf, dropTables, mysqlDdl, runStatements } from '../ddl.js';

// Verbatim from the dump (less the AUTO_INCREMENT counter), charset and
// collation included: utf8mb3_general_ci is what makes host lookups case- and
// trailing-space-insensitive (nova-behaviour.md §1.7).
const MYSQL: readonly string[] = [
  mysqlDdl`CREATE TABLE "cell_mappings" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "uuid" varchar(36) NOT NULL,
  "name" varchar(255) DEFAULT NULL,
  "transport_url" text DEFAULT NULL,
  "database_connection" text DEFAULT NULL,
  "disabled" tinyint(1) DEFAULT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_cell_mappings0uuid" ("uuid"),
  KEY "uuid_idx" ("uuid")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci`,
  mysqlDdl`CREATE TABLE "host_mappings" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "cell_id" int(11) NOT NULL,
  "host" varchar(255) NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_host_mappings0host" ("host"),
  KEY "cell_id" ("cell_id"),
  KEY "host_idx" ("host"),
  CONSTRAINT "host_mappings_ibfk_1" FOREIGN KEY ("cell_id") REFERENCES "cell_mappings" ("id")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci`,
  mysqlDdl`CREATE TABLE "instance_mappings" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "instance_uuid" varchar(36) NOT NULL,
  "cell_id" int(11) DEFAULT NULL,
  "project_id" varchar(255) NOT NULL,
  "queued_for_delete" tinyint(1) DEFAULT NULL,
  "user_id" varchar(255) DEFAULT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_instance_mappings0instance_uuid" ("instance_uuid"),
  KEY "cell_id" ("cell_id"),
  KEY "project_id_idx" ("project_id"),
  KEY "instance_uuid_idx" ("instance_uuid"),
  KEY "instance_mappings_user_id_project_id_idx" ("user_id","project_id"),
  CONSTRAINT "instance_mappings_ibfk_1" FOREIGN KEY ("cell_id") REFERENCES "cell_mappings" ("id")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci`,
];

// SQLite equivalents: same columns, nullability, defaults and unique index
// names. SQLite index names are per schema, not per table, so the two
// non-unique `cell_id` keys get their table's name in front.
// host_mappings.host is NOCASE because uniq_host_mappings0host is
// case-insensitive in MySQL and discover_hosts relies on it; SQLite cannot
// also ignore trailing spaces as utf8mb3_general_ci (PAD SPACE) does.
const SQLITE: readonly string[] = [
  `CREATE TABLE cell_mappings (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  uuid varchar(36) NOT NULL,
  name varchar(255) DEFAULT NULL,
  transport_url text DEFAULT NULL,
  database_connection text DEFAULT NULL,
  disabled tinyint(1) DEFAULT NULL
)`,
  'CREATE UNIQUE INDEX uniq_cell_mappings0uuid ON cell_mappings (uuid)',
  'CREATE INDEX uuid_idx ON cell_mappings (uuid)',
  `CREATE TABLE host_mappings (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  cell_id int(11) NOT NULL,
  host varchar(255) NOT NULL COLLATE NOCASE,
  CONSTRAINT host_mappings_ibfk_1 FOREIGN KEY (cell_id) REFERENCES cell_mappings (id)
)`,
  'CREATE UNIQUE INDEX uniq_host_mappings0host ON host_mappings (host)',
  'CREATE INDEX host_mappings_cell_id ON host_mappings (cell_id)',
  'CREATE INDEX host_idx ON host_mappings (host)',
  `CREATE TABLE instance_mappings (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  instance_uuid varchar(36) NOT NULL,
  cell_id int(11) DEFAULT NULL,
  project_id varchar(255) NOT NULL,
  queued_for_delete tinyint(1) DEFAULT NULL,
  user_id varchar(255) DEFAULT NULL,
  CONSTRAINT instance_mappings_ibfk_1 FOREIGN KEY (cell_id) REFERENCES cell_mappings (id)
)`,
  'CREATE UNIQUE INDEX uniq_instance_mappings0instance_uuid ON instance_mappings (instance_uuid)',
  'CREATE INDEX instance_mappings_cell_id ON instance_mappings (cell_id)',
  'CREATE INDEX project_id_idx ON instance_mappings (project_id)',
  'CREATE INDEX instance_uuid_idx ON instance_mappings (instance_uuid)',
  'CREATE INDEX instance_mappings_user_id_project_id_idx ON instance_mappings (user_id, project_id)',
];

const DROP_ORDER: readonly string[] = ['instance_mappings', 'host_mappings', 'cell_mappings'];

export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, dialectOf(knex) === 'mysql' ? MYSQL : SQLITE);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, DROP_ORDER);
}
