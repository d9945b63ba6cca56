// What `placement heal_allocations` reads from a cell, as nova-manage loads
// it: live instances with their embedded flavor (instance_extra.flavor,
// parsed at once so 30,000 JSON documents are not kept) and whether each is
// volume-backed (its root block device mapping, else an empty image_ref:
// compute_utils.is_volume_backed_instance). Keyset pages, one statement per
// 5,000 rows.
import type { Knex } from 'knex';
import { parseEmbeddedFlavor, type EmbeddedFlavor } from '../../domain/flavor-resources.js';
import type { HealInstanceRec, HealNode } from '../../domain/heal-allocations.js';
import { eachByKeyset, readByKeyset } from '../keyset.js';
import { NODE_NAME_COLUMNS, liveNodeNames } from './snapshot-reads.js';
import type { StringPool } from '../string-pool.js';

interface Row {
  readonly id: number;
  readonly uuid: string;
  readonly host: string | null;
  readonly node: string | null;
  readonly task_state: string | null;
  readonly project_id: string | null;
  readonly user_id: string | null;
  readonly image_ref: string | null;
  readonly created_at: unknown;
  readonly flavor: string | null;
}

/**
 * Rows per page: each carries its flavor's JSON (a few KB), so pages are
 * smaller than the other tables' to keep the text in flight small.
 */
const HEAL_PAGE = 1000;

/**
 * `pool`: the cell read's (db/string-pool.ts), so that an instance's uuid,
 * host and node, and its project and user, are the strings its compute node
 * and its allocations hold already.
 */
export async function readHealInstances(db: Knex, cellUuid: string, onlyUuid: string | undefined, pool: StringPool): Promise<HealInstanceRec[]> {
  const roots = await readRootDestinations(db, onlyUuid, pool);
  const flavors = new FlavorCache();
  return readByKeyset(
    async (afterId, limit) => {
      const q = db('instances as i')
        .leftJoin('instance_extra as x', 'x.instance_uuid', 'i.uuid')
        .select('i.id', 'i.uuid', 'i.host', 'i.node', 'i.task_state', 'i.project_id', 'i.user_id', 'i.image_ref', 'i.created_at', 'x.flavor')
        .where('i.deleted', 0)
        .andWhere('i.id', '>', afterId)
        .orderBy('i.id')
        .limit(limit);
      if (onlyUuid !== undefined) q.andWhere('i.uuid', onlyUuid);
      return (await q) as Row[];
    },
    (r) => {
      const root = roots.get(r.uuid);
      return {
        cellUuid,
        id: Number(r.id),
        uuid: pool.get(r.uuid),
        host: pool.nullable(r.host),
        node: pool.nullable(r.node),
        taskState: pool.nullable(r.task_state),
        projectId: pool.nullable(r.project_id),
        userId: pool.nullable(r.user_id),
        createdAt: timestamp(r.created_at),
        flavor: flavors.parse(r.flavor),
        volumeBacked: root !== undefined ? root === 'volume' : r.image_ref === null || r.image_ref === '',
      };
    },
    HEAL_PAGE,
  );
}

/** The live compute nodes, only the columns the walk looks at (HealNode), in id order. */
export async function readHealNodes(db: Knex, cellUuid: string, pool: StringPool): Promise<HealNode[]> {
  return readByKeyset(
    async (afterId, limit) => (await db('compute_nodes').select(...NODE_NAME_COLUMNS).where('deleted', 0).andWhere('id', '>', afterId).orderBy('id').limit(limit)) as Array<Parameters<typeof liveNodeNames>[0]>,
    (r) => liveNodeNames(r, cellUuid, pool),
  );
}

/**
 * The instances of a flavor embed the same text: parsed once, and one
 * record shared by them (it is never changed). A cloud has few flavors;
 * past FLAVOR_CACHE distinct texts the rest are parsed one by one rather than
 * held.
 */
class FlavorCache {
  private readonly parsed = new Map<string, EmbeddedFlavor | null>();

  parse(text: string | null): EmbeddedFlavor | null {
    if (text === null) return null;
    const held = this.parsed.get(text);
    if (held !== undefined) return held;
    const flavor = parseEmbeddedFlavor(text) ?? null;
    if (this.parsed.size < FLAVOR_CACHE) this.parsed.set(text, flavor);
    return flavor;
  }
}

const FLAVOR_CACHE = 256;

/** The first live boot_index 0 mapping of each instance (BlockDeviceMappingList.root_bdm): its destination_type. */
async function readRootDestinations(db: Knex, onlyUuid: string | undefined, pool: StringPool): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  await eachByKeyset(
    async (afterId, limit) => {
      const q = db('block_device_mapping')
        .select('id', 'instance_uuid', 'destination_type')
        .where({ deleted: 0, boot_index: 0 })
        .andWhere('id', '>', afterId)
        .orderBy('id')
        .limit(limit);
      if (onlyUuid !== undefined) q.andWhere('instance_uuid', onlyUuid);
      return (await q) as Array<{ id: number; instance_uuid: string | null; destination_type: string | null }>;
    },
    (r) => {
      if (r.instance_uuid !== null && !out.has(r.instance_uuid)) out.set(pool.get(r.instance_uuid), pool.nullable(r.destination_type));
    },
  );
  return out;
}

function timestamp(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString().slice(0, 19).replace('T', ' ');
  return String(v);
}
