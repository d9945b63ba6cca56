// Typed, frozen configuration values. Parsing lives beside this file; every
// other layer reads configuration only through these types.
import type { IronicSettings } from './ironic-settings.js';
import type { PartitionSetting } from './ironic-partitions.js';

/** Where one configuration source came from, in command-line order. */
export type ConfigSource =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'dir'; readonly path: string };

/** A parsed SQLAlchemy database URL, ready for a driver. Never printed raw. */
export type DbTarget =
  | {
      readonly kind: 'mysql';
      readonly host: string | undefined;
      readonly port: number | undefined;
      readonly user: string | undefined;
      /** Decoded password; only the db layer reads it. */
      readonly password: string | undefined;
      readonly database: string | undefined;
      readonly socketPath: string | undefined;
      readonly charset: string;
      /** Safe to print: "mysql://host:port/db" with no credentials. */
      readonly display: string;
      /** TLS settings from ssl_* URL arguments (or ssl-* in a read_default_file); absent means no TLS. */
      readonly ssl?: MysqlSsl;
    }
  | {
      readonly kind: 'sqlite';
      /** Absolute or cwd-relative path; ':memory:' for `sqlite://`. */
      readonly filename: string;
      readonly display: string;
    };

/** PyMySQL's ssl={...} dict, as SQLAlchemy folds ssl_ca, ssl_cert, ... into it. Paths are as given. */
export interface MysqlSsl {
  readonly ca?: string;
  readonly capath?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly cipher?: string;
  readonly checkHostname?: boolean;
  readonly verifyCert?: boolean;
  readonly verifyIdentity?: boolean;
}

export interface ReconcileSettings {
  /** [nova_reconcile] journal_dir; default /var/lib/nova-reconcile/journal, falling back to ~/.nova-reconcile/journal. */
  readonly journalDir: string;
  /** [nova_reconcile] lock_timeout, seconds (default 10). */
  readonly lockTimeout: number;
  /**
   * [nova_reconcile] lock_database: on a Galera cluster, the database that
   * holds the apply lock's lease table (nova_reconcile_locks); undefined: the
   * API database.
   */
  readonly lockDatabase: string | undefined;
  /** --allow-unknown-schema: writes run on a database at an alembic head this build does not know. */
  readonly allowUnknownSchema: boolean;
  /** [nova_reconcile] cell_concurrency (default 4). */
  readonly cellConcurrency: number;
  /**
   * [nova_reconcile] apply_concurrency (default 4): units of a plan applied
   * at the same time, where their footprints are disjoint; 1 applies them
   * one after the other.
   */
  readonly applyConcurrency: number;
  /**
   * [nova_reconcile] apply_batch_units (default 64): at most this many
   * consecutive units of one shape written in one transaction per database
   * (src/operations/apply-batches.ts); 1 gives each change its own.
   */
  readonly applyBatchUnits: number;
  /** [nova_reconcile] connect_timeout, seconds (default 10). */
  readonly connectTimeout: number;
  /**
   * [nova_reconcile] ironic_partitions ("cg-a: host1, host2; cg-b: host3;
   * *: host4"), merged with the given nova.conf's [ironic] partition_key and
   * peer_list; undefined when neither says anything.
   */
  readonly ironicPartitions: readonly PartitionSetting[] | undefined;
  /**
   * The given nova.conf's [ironic] shard (Nova 2024.1) and its [DEFAULT]
   * host: that nova-compute owns every node of the shard, and no node of
   * another shard. Absent when the file sets no shard.
   */
  readonly ironicShard?: { readonly shard: string; readonly host: string | undefined };
  /** [nova_reconcile] ironic_ring_members, comma-separated; undefined when unset. */
  readonly ironicRingMembers: readonly string[] | undefined;
  /**
   * [nova_reconcile] max_apply_units (default 1000; 0: no limit): an apply
   * whose plan has more units applies nothing (the circuit breaker, docs/RELIABILITY.md).
   */
  readonly maxApplyUnits: number;
  /**
   * [nova_reconcile] max_apply_fraction (default 0.5; 1: no limit): an apply
   * that would remove or move more than this share of the compute nodes of a
   * cell, or of the resource providers, applies nothing.
   */
  readonly maxApplyFraction: number;
  /**
   * [nova_reconcile] min_ironic_fraction (default 0.5; 0: no check): an
   * --ironic-nodes list that holds fewer than this share of the live ironic
   * compute nodes the cells know is refused as implausible.
   */
  readonly minIronicFraction: number;
  /**
   * [nova_reconcile] sandbox_created_at (naive UTC), epoch ms; set only by
   * `sandbox create`. Service liveness is judged as of this moment instead of
   * the clock: a sandbox is a picture of a deployment at its creation.
   */
  readonly sandboxCreatedAt: number | undefined;
}

export interface NovaConfig {
  /** Files actually read, in the order they were applied. */
  readonly files: readonly string[];
  /**
   * Raw lookup with oslo.config precedence (env > last file > earlier file). Group is case-insensitive except DEFAULT.
   * Applies the deprecated names of [database]/[api_database] connection and `$option` substitution
   * (throws ReconcileError('config') for a `$reference` that is set nowhere).
   */
  get(group: string, key: string): string | undefined;
  /** [api_database] connection */
  readonly apiDatabaseConnection: string | undefined;
  /** [database] connection: the "local" cell database, and the template source for cell URLs. */
  readonly databaseConnection: string | undefined;
  /** [DEFAULT] transport_url: the template source for cell transport URLs. */
  readonly transportUrl: string | undefined;
  /** [placement_database] connection */
  readonly placementDatabaseConnection: string | undefined;
  /** [ironic_database] connection (optional, read-only) */
  readonly ironicDatabaseConnection: string | undefined;
  /** [ironic]: how nova-compute reaches the Ironic API; undefined when it has no auth_type or endpoint_override. */
  readonly ironic: IronicSettings | undefined;
  /** [DEFAULT] service_down_time, seconds, with the servicegroup override (see nova-facts §7). */
  readonly serviceDownTime: number;
  /** [DEFAULT] report_interval, seconds. */
  readonly reportInterval: number;
  readonly reconcile: ReconcileSettings;
}
