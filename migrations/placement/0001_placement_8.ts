// The Placement 8.0.0 tables (alembic head 422ece571366) the tool uses, as
// `placement-manage db sync` creates them. The placement database is
// utf8mb4_general_ci throughout, unlike Nova's utf8mb3 ones. Compared with
// reference/nova-zed-schema/placement.sql by test/db/schema-migrations.test.ts.
import type { Knex } from 'knex';
import { dialectOf, dropTables, mysqlDdl, runStatements } from '../ddl.js';

// Verbatim from the dump, ordered so that every foreign key's target exists
// first: consumers -> consumer_types, resource_provider_traits -> traits and
// resource_providers, and the providers' own root/parent self-references.
// allocations.consumer_id holds the consumer's uuid and has no foreign key.
const MYSQL: readonly string[] = [
  mysqlDdl`CREATE TABLE "consumer_types" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "name" varchar(255) NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_consumer_types0name" ("name")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "projects" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "external_id" varchar(255) NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_projects0external_id" ("external_id")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "users" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "external_id" varchar(255) NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_users0external_id" ("external_id")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "resource_classes" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "name" varchar(255) NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_resource_classes0name" ("name")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "traits" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "name" varchar(255) NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_traits0name" ("name")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "placement_aggregates" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "uuid" varchar(36) DEFAULT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_placement_aggregates0uuid" ("uuid"),
  KEY "ix_placement_aggregates_uuid" ("uuid")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "resource_providers" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "uuid" varchar(36) NOT NULL,
  "name" varchar(200) DEFAULT NULL,
  "generation" int(11) DEFAULT NULL,
  "root_provider_id" int(11) DEFAULT NULL,
  "parent_provider_id" int(11) DEFAULT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_resource_providers0uuid" ("uuid"),
  UNIQUE KEY "uniq_resource_providers0name" ("name"),
  KEY "resource_providers_name_idx" ("name"),
  KEY "resource_providers_parent_provider_id_idx" ("parent_provider_id"),
  KEY "resource_providers_root_provider_id_idx" ("root_provider_id"),
  KEY "resource_providers_uuid_idx" ("uuid"),
  CONSTRAINT "resource_providers_ibfk_1" FOREIGN KEY ("parent_provider_id") REFERENCES "resource_providers" ("id"),
  CONSTRAINT "resource_providers_ibfk_2" FOREIGN KEY ("root_provider_id") REFERENCES "resource_providers" ("id")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "inventories" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "resource_provider_id" int(11) NOT NULL,
  "resource_class_id" int(11) NOT NULL,
  "total" int(11) NOT NULL,
  "reserved" int(11) NOT NULL,
  "min_unit" int(11) NOT NULL,
  "max_unit" int(11) NOT NULL,
  "step_size" int(11) NOT NULL,
  "allocation_ratio" float NOT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_inventories0resource_provider_resource_class" ("resource_provider_id","resource_class_id"),
  KEY "inventories_resource_class_id_idx" ("resource_class_id"),
  KEY "inventories_resource_provider_id_idx" ("resource_provider_id"),
  KEY "inventories_resource_provider_resource_class_idx" ("resource_provider_id","resource_class_id")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "allocations" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "resource_provider_id" int(11) NOT NULL,
  "consumer_id" varchar(36) NOT NULL,
  "resource_class_id" int(11) NOT NULL,
  "used" int(11) NOT NULL,
  PRIMARY KEY ("id"),
  KEY "allocations_resource_provider_class_used_idx" ("resource_provider_id","resource_class_id","used"),
  KEY "allocations_resource_class_id_idx" ("resource_class_id"),
  KEY "allocations_consumer_id_idx" ("consumer_id")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "consumers" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "uuid" varchar(36) NOT NULL,
  "project_id" int(11) NOT NULL,
  "user_id" int(11) NOT NULL,
  "generation" int(11) NOT NULL DEFAULT 0,
  "consumer_type_id" int(11) DEFAULT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_consumers0uuid" ("uuid"),
  KEY "consumers_project_id_user_id_uuid_idx" ("project_id","user_id","uuid"),
  KEY "consumers_project_id_uuid_idx" ("project_id","uuid"),
  KEY "consumers_consumer_type_id_idx" ("consumer_type_id"),
  CONSTRAINT "consumers_consumer_type_id_fkey" FOREIGN KEY ("consumer_type_id") REFERENCES "consumer_types" ("id")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "resource_provider_traits" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "trait_id" int(11) NOT NULL,
  "resource_provider_id" int(11) NOT NULL,
  PRIMARY KEY ("trait_id","resource_provider_id"),
  KEY "resource_provider_traits_resource_provider_trait_idx" ("resource_provider_id","trait_id"),
  CONSTRAINT "resource_provider_traits_ibfk_1" FOREIGN KEY ("resource_provider_id") REFERENCES "resource_providers" ("id"),
  CONSTRAINT "resource_provider_traits_ibfk_2" FOREIGN KEY ("trait_id") REFERENCES "traits" ("id")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
  mysqlDdl`CREATE TABLE "resource_provider_aggregates" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "resource_provider_id" int(11) NOT NULL,
  "aggregate_id" int(11) NOT NULL,
  PRIMARY KEY ("resource_provider_id","aggregate_id"),
  KEY "resource_provider_aggregates_aggregate_id_idx" ("aggregate_id")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci`,
];

// SQLite equivalents. resource_providers.name is NOCASE because placement's
// uniq_resource_providers0name is case-insensitive ("NODE-1" collides with
// "node-1", nova-behaviour.md §8.2) and the provider-name conflicts the tool
// repairs come from exactly that.
const SQLITE: readonly string[] = [
  `CREATE TABLE consumer_types (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  name varchar(255) NOT NULL
)`,
  'CREATE UNIQUE INDEX uniq_consumer_types0name ON consumer_types (name)',
  `CREATE TABLE projects (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  external_id varchar(255) NOT NULL
)`,
  'CREATE UNIQUE INDEX uniq_projects0external_id ON projects (external_id)',
  `CREATE TABLE users (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  external_id varchar(255) NOT NULL
)`,
  'CREATE UNIQUE INDEX uniq_users0external_id ON users (external_id)',
  `CREATE TABLE resource_classes (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  name varchar(255) NOT NULL
)`,
  'CREATE UNIQUE INDEX uniq_resource_classes0name ON resource_classes (name)',
  `CREATE TABLE traits (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  name varchar(255) NOT NULL
)`,
  'CREATE UNIQUE INDEX uniq_traits0name ON traits (name)',
  `CREATE TABLE placement_aggregates (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  uuid varchar(36) DEFAULT NULL
)`,
  'CREATE UNIQUE INDEX uniq_placement_aggregates0uuid ON placement_aggregates (uuid)',
  'CREATE INDEX ix_placement_aggregates_uuid ON placement_aggregates (uuid)',
  `CREATE TABLE resource_providers (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  uuid varchar(36) NOT NULL,
  name varchar(200) DEFAULT NULL COLLATE NOCASE,
  generation int(11) DEFAULT NULL,
  root_provider_id int(11) DEFAULT NULL,
  parent_provider_id int(11) DEFAULT NULL,
  CONSTRAINT resource_providers_ibfk_1 FOREIGN KEY (parent_provider_id) REFERENCES resource_providers (id),
  CONSTRAINT resource_providers_ibfk_2 FOREIGN KEY (root_provider_id) REFERENCES resource_providers (id)
)`,
  'CREATE UNIQUE INDEX uniq_resource_providers0uuid ON resource_providers (uuid)',
  'CREATE UNIQUE INDEX uniq_resource_providers0name ON resource_providers (name)',
  'CREATE INDEX resource_providers_name_idx ON resource_providers (name)',
  'CREATE INDEX resource_providers_parent_provider_id_idx ON resource_providers (parent_provider_id)',
  'CREATE INDEX resource_providers_root_provider_id_idx ON resource_providers (root_provider_id)',
  'CREATE INDEX resource_providers_uuid_idx ON resource_providers (uuid)',
  `CREATE TABLE inventories (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  resource_provider_id int(11) NOT NULL,
  resource_class_id int(11) NOT NULL,
  total int(11) NOT NULL,
  reserved int(11) NOT NULL,
  min_unit int(11) NOT NULL,
  max_unit int(11) NOT NULL,
  step_size int(11) NOT NULL,
  allocation_ratio float NOT NULL
)`,
  'CREATE UNIQUE INDEX uniq_inventories0resource_provider_resource_class ON inventories (resource_provider_id, resource_class_id)',
  'CREATE INDEX inventories_resource_class_id_idx ON inventories (resource_class_id)',
  'CREATE INDEX inventories_resource_provider_id_idx ON inventories (resource_provider_id)',
  'CREATE INDEX inventories_resource_provider_resource_class_idx ON inventories (resource_provider_id, resource_class_id)',
  `CREATE TABLE allocations (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  resource_provider_id int(11) NOT NULL,
  consumer_id varchar(36) NOT NULL,
  resource_class_id int(11) NOT NULL,
  used int(11) NOT NULL
)`,
  'CREATE INDEX allocations_resource_provider_class_used_idx ON allocations (resource_provider_id, resource_class_id, used)',
  'CREATE INDEX allocations_resource_class_id_idx ON allocations (resource_class_id)',
  'CREATE INDEX allocations_consumer_id_idx ON allocations (consumer_id)',
  `CREATE TABLE consumers (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  uuid varchar(36) NOT NULL,
  project_id int(11) NOT NULL,
  user_id int(11) NOT NULL,
  generation int(11) NOT NULL DEFAULT 0,
  consumer_type_id int(11) DEFAULT NULL,
  CONSTRAINT consumers_consumer_type_id_fkey FOREIGN KEY (consumer_type_id) REFERENCES consumer_types (id)
)`,
  'CREATE UNIQUE INDEX uniq_consumers0uuid ON consumers (uuid)',
  'CREATE INDEX consumers_project_id_user_id_uuid_idx ON consumers (project_id, user_id, uuid)',
  'CREATE INDEX consumers_project_id_uuid_idx ON consumers (project_id, uuid)',
  'CREATE INDEX consumers_consumer_type_id_idx ON consumers (consumer_type_id)',
  `CREATE TABLE resource_provider_traits (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  trait_id int(11) NOT NULL,
  resource_provider_id int(11) NOT NULL,
  PRIMARY KEY (trait_id, resource_provider_id),
  CONSTRAINT resource_provider_traits_ibfk_1 FOREIGN KEY (resource_provider_id) REFERENCES resource_providers (id),
  CONSTRAINT resource_provider_traits_ibfk_2 FOREIGN KEY (trait_id) REFERENCES traits (id)
)`,
  'CREATE INDEX resource_provider_traits_resource_provider_trait_idx ON resource_provider_traits (resource_provider_id, trait_id)',
  `CREATE TABLE resource_provider_aggregates (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  resource_provider_id int(11) NOT NULL,
  aggregate_id int(11) NOT NULL,
  PRIMARY KEY (resource_provider_id, aggregate_id)
)`,
  'CREATE INDEX resource_provider_aggregates_aggregate_id_idx ON resource_provider_aggregates (aggregate_id)',
];

const DROP_ORDER: readonly string[] = [
  'resource_provider_aggregates',
  'resource_provider_traits',
  'consumers',
  'allocations',
  'inventories',
  'resource_providers',
  'placement_aggregates',
  'traits',
  'resource_classes',
  'users',
  'projects',
  'consumer_types',
];

export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, dialectOf(knex) === 'mysql' ? MYSQL : SQLITE);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, DROP_ORDER);
}
