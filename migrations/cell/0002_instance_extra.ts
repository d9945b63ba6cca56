// instance_extra and block_device_mapping, as Nova 26.2.2 creates them:
// `placement heal_allocations` reads an instance's embedded flavor from
// instance_extra.flavor (Instance.flavor, expected_attrs=['flavor']) and its
// root block device mapping to tell a volume-backed instance (no DISK_GB for
// the root disk: compute_utils.is_volume_backed_instance). Compared with
// reference/nova-zed-schema/nova_cell.sql by test/db/schema-migrations.test.ts.
import type { Knex } from 'knex';
import { dialectOf, dropTables, mysqlDdl, runStatements } from '../ddl.js';

const MYSQL: readonly string[] = [
  mysqlDdl`CREATE TABLE "instance_extra" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "deleted_at" datetime DEFAULT NULL,
  "deleted" int(11) DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "instance_uuid" varchar(36) NOT NULL,
  "numa_topology" text DEFAULT NULL,
  "pci_requests" text DEFAULT NULL,
  "flavor" text DEFAULT NULL,
  "vcpu_model" text DEFAULT NULL,
  "migration_context" text DEFAULT NULL,
  "keypairs" text DEFAULT NULL,
  "device_metadata" text DEFAULT NULL,
  "trusted_certs" text DEFAULT NULL,
  "vpmems" text DEFAULT NULL,
  "resources" text DEFAULT NULL,
  PRIMARY KEY ("id"),
  KEY "instance_extra_idx" ("instance_uuid"),
  CONSTRAINT "instance_extra_instance_uuid_fkey" FOREIGN KEY ("instance_uuid") REFERENCES "instances" ("uuid")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci`,
  mysqlDdl`CREATE TABLE "block_device_mapping" (
  "created_at" datetime DEFAULT NULL,
  "updated_at" datetime DEFAULT NULL,
  "deleted_at" datetime DEFAULT NULL,
  "id" int(11) NOT NULL AUTO_INCREMENT,
  "device_name" varchar(255) DEFAULT NULL,
  "delete_on_termination" tinyint(1) DEFAULT NULL,
  "snapshot_id" varchar(36) DEFAULT NULL,
  "volume_id" varchar(36) DEFAULT NULL,
  "volume_size" int(11) DEFAULT NULL,
  "no_device" tinyint(1) DEFAULT NULL,
  "connection_info" mediumtext DEFAULT NULL,
  "instance_uuid" varchar(36) DEFAULT NULL,
  "deleted" int(11) DEFAULT NULL,
  "source_type" varchar(255) DEFAULT NULL,
  "destination_type" varchar(255) DEFAULT NULL,
  "guest_format" varchar(255) DEFAULT NULL,
  "device_type" varchar(255) DEFAULT NULL,
  "disk_bus" varchar(255) DEFAULT NULL,
  "boot_index" int(11) DEFAULT NULL,
  "image_id" varchar(36) DEFAULT NULL,
  "tag" varchar(255) DEFAULT NULL,
  "attachment_id" varchar(36) DEFAULT NULL,
  "uuid" varchar(36) DEFAULT NULL,
  "volume_type" varchar(255) DEFAULT NULL,
  "encrypted" tinyint(1) DEFAULT NULL,
  "encryption_secret_uuid" varchar(36) DEFAULT NULL,
  "encryption_format" varchar(128) DEFAULT NULL,
  "encryption_options" varchar(4096) DEFAULT NULL,
  PRIMARY KEY ("id"),
  UNIQUE KEY "uniq_block_device_mapping0uuid" ("uuid"),
  KEY "snapshot_id" ("snapshot_id"),
  KEY "volume_id" ("volume_id"),
  KEY "block_device_mapping_instance_uuid_volume_id_idx" ("instance_uuid","volume_id"),
  KEY "block_device_mapping_instance_uuid_device_name_idx" ("instance_uuid","device_name"),
  KEY "block_device_mapping_instance_uuid_idx" ("instance_uuid"),
  CONSTRAINT "block_device_mapping_instance_uuid_fkey" FOREIGN KEY ("instance_uuid") REFERENCES "instances" ("uuid")
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb3 COLLATE=utf8mb3_general_ci`,
];

const SQLITE: readonly string[] = [
  `CREATE TABLE instance_extra (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  deleted_at datetime DEFAULT NULL,
  deleted int(11) DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  instance_uuid varchar(36) NOT NULL,
  numa_topology text DEFAULT NULL,
  pci_requests text DEFAULT NULL,
  flavor text DEFAULT NULL,
  vcpu_model text DEFAULT NULL,
  migration_context text DEFAULT NULL,
  keypairs text DEFAULT NULL,
  device_metadata text DEFAULT NULL,
  trusted_certs text DEFAULT NULL,
  vpmems text DEFAULT NULL,
  resources text DEFAULT NULL,
  CONSTRAINT instance_extra_instance_uuid_fkey FOREIGN KEY (instance_uuid) REFERENCES instances (uuid)
)`,
  'CREATE INDEX instance_extra_idx ON instance_extra (instance_uuid)',
  `CREATE TABLE block_device_mapping (
  created_at datetime DEFAULT NULL,
  updated_at datetime DEFAULT NULL,
  deleted_at datetime DEFAULT NULL,
  id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  device_name varchar(255) DEFAULT NULL,
  delete_on_termination tinyint(1) DEFAULT NULL,
  snapshot_id varchar(36) DEFAULT NULL,
  volume_id varchar(36) DEFAULT NULL,
  volume_size int(11) DEFAULT NULL,
  no_device tinyint(1) DEFAULT NULL,
  connection_info mediumtext DEFAULT NULL,
  instance_uuid varchar(36) DEFAULT NULL,
  deleted int(11) DEFAULT NULL,
  source_type varchar(255) DEFAULT NULL,
  destination_type varchar(255) DEFAULT NULL,
  guest_format varchar(255) DEFAULT NULL,
  device_type varchar(255) DEFAULT NULL,
  disk_bus varchar(255) DEFAULT NULL,
  boot_index int(11) DEFAULT NULL,
  image_id varchar(36) DEFAULT NULL,
  tag varchar(255) DEFAULT NULL,
  attachment_id varchar(36) DEFAULT NULL,
  uuid varchar(36) DEFAULT NULL,
  volume_type varchar(255) DEFAULT NULL,
  encrypted tinyint(1) DEFAULT NULL,
  encryption_secret_uuid varchar(36) DEFAULT NULL,
  encryption_format varchar(128) DEFAULT NULL,
  encryption_options varchar(4096) DEFAULT NULL,
  CONSTRAINT block_device_mapping_instance_uuid_fkey FOREIGN KEY (instance_uuid) REFERENCES instances (uuid)
)`,
  'CREATE UNIQUE INDEX uniq_block_device_mapping0uuid ON block_device_mapping (uuid)',
  'CREATE INDEX snapshot_id ON block_device_mapping (snapshot_id)',
  'CREATE INDEX volume_id ON block_device_mapping (volume_id)',
  'CREATE INDEX block_device_mapping_instance_uuid_volume_id_idx ON block_device_mapping (instance_uuid, volume_id)',
  'CREATE INDEX block_device_mapping_instance_uuid_device_name_idx ON block_device_mapping (instance_uuid, device_name)',
  'CREATE INDEX block_device_mapping_instance_uuid_idx ON block_device_mapping (instance_uuid)',
];

export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, dialectOf(knex) === 'mysql' ? MYSQL : SQLITE);
}

export async function down(knex: Knex): Promise<void> {
  await dropTables(knex, ['block_device_mapping', 'instance_extra']);
}
