// The first pass of the audit by cell (audit-by-cell.ts): before any cell is
// judged, which cell holds each key that a check joins across cells, and
// where each host mapping and resource provider belongs.
//  - Every cell's services and compute nodes, a few columns in keyset pages:
//    the folded hosts it holds (a live nova-compute service or a live node
//    on them: what the audit's host mapping checks call held), the
//    lower-cased names and the uuids of its nodes, live or soft-deleted.
//    Its active migrations are kept whole: they are few, and the audit
//    judges a consumer by every cell's.
//  - Every host mapping: one whose host a cell holds is that cell's; a
//    mapping held by no cell is judged at the end (stale, or its host still
//    has instances).
//  - Every resource provider: it is the cell's whose node has its uuid or
//    name, or its root's; one no node names (sharing, foreign, stale with no
//    node row) is judged at the end.
// A key held by two cells, or a provider two cells name, ends the pass: the
// caller reads the cloud whole, as the audit always did.
import type { Knex } from 'knex';
import type { CellMapping, Deployment } from '../../db/deployment-databases.js';
import { eachHostMapping } from '../../db/api/snapshot-reads.js';
import { eachNodeKeys, eachServiceKeys } from '../../db/cell/audit-reads.js';
import { readActiveMigrations } from '../../db/cell/snapshot-reads.js';
import { eachProviderKeys } from '../../db/placement/audit-reads.js';
import { KeyOwners, KeyOwnersBuilder, NO_OWNER, SHARED } from '../../domain/key-owners.js';
import type { HostMappingRec, IronicNodeRec, MigrationRec } from '../../domain/model.js';
import { hostKey } from '../../domain/snapshot-index.js';
import { cellFailure, cellLabel, checkGroundTruth, type CellPart } from './cells.js';

/** What the first pass knows of the whole cloud. */
export interface CloudKeys {
  /** Folded hosts, by the cell that holds them. */
  readonly hosts: KeyOwners;
  /** Lower-cased node names (live or soft-deleted), by cell. */
  readonly names: KeyOwners;
  /** Node uuids (live or soft-deleted), by cell. */
  readonly nodeUuids: KeyOwners;
  /** Every cell's active migrations, in cell order. */
  readonly migrations: readonly MigrationRec[];
  /** Whether a service or compute node has the --host asked (folded). */
  readonly hostSeen: boolean;
}

/** Where the first pass stopped: the reason the cloud is read whole. */
export interface Shared {
  readonly shared: string;
}

export interface KeyPassInput {
  readonly deployment: Deployment;
  readonly cells: readonly CellMapping[];
  readonly ironic: { readonly nodes: readonly IronicNodeRec[]; readonly label: string } | undefined;
  readonly progress: (line: string) => void;
  /** The folded --host, if asked. */
  readonly host?: string;
}

/** Every cell's keys, one cell after the other; refuses the cells checkGroundTruth refuses, as the whole read does. */
export async function readCloudKeys(input: KeyPassInput): Promise<CloudKeys | Shared> {
  const { deployment, cells, progress } = input;
  const hosts = new KeyOwnersBuilder();
  const names = new KeyOwnersBuilder();
  const nodeUuids = new KeyOwnersBuilder();
  const migrations: MigrationRec[] = [];
  const parts: CellPart[] = [];
  let hostSeen = false;
  const seeHost = (host: string | null): void => {
    if (input.host !== undefined && hostKey(host) === input.host) hostSeen = true;
  };
  for (const [i, cell] of cells.entries()) {
    const counts = { services: 0, liveComputeNodes: 0, liveComputeServices: 0 };
    const ironicNames: string[] = [];
    try {
      const db = await deployment.cell(cell);
      progress(`reading the keys of cell ${cellLabel(cell)} (${db.target.display})…`);
      await eachServiceKeys(db.knex, (r) => {
        counts.services += 1;
        seeHost(r.host);
        if (Number(r.deleted) !== 0 || r.binary !== 'nova-compute' || r.host === null) return;
        counts.liveComputeServices += 1;
        hosts.add(hostKey(r.host), i);
      });
      await eachNodeKeys(db.knex, (r) => {
        seeHost(r.host);
        if (r.uuid !== null) nodeUuids.add(r.uuid, i);
        if (r.hypervisor_hostname !== null) names.add(r.hypervisor_hostname.toLowerCase(), i);
        if (Number(r.deleted) !== 0) return;
        counts.liveComputeNodes += 1;
        if (r.host !== null) hosts.add(hostKey(r.host), i);
        if (r.hypervisor_type === 'ironic' && r.hypervisor_hostname !== null && input.ironic !== undefined) ironicNames.push(r.hypervisor_hostname);
      });
      migrations.push(...(await readActiveMigrations(db.knex, cell.uuid)));
    } catch (err) {
      throw cellFailure(cell, err);
    }
    parts.push({ services: [], computeNodes: [], instances: [], migrations: [], counts, ironicNames });
  }
  checkGroundTruth(cells, parts, true, input.ironic?.nodes, input.ironic?.label, deployment.config.reconcile.minIronicFraction);
  const built = { hosts: hosts.build(), names: names.build(), nodeUuids: nodeUuids.build() };
  const shared = (['hosts', 'names', 'nodeUuids'] as const).filter((k) => built[k].shared > 0);
  if (shared.length > 0) return { shared: `cells share ${shared.map((k) => `${built[k].shared} ${KEY_WORDS[k]}`).join(', ')}` };
  return { ...built, migrations, hostSeen };
}

const KEY_WORDS = { hosts: 'host(s)', names: 'node name(s)', nodeUuids: 'node uuid(s)' } as const;

/** The host mappings the cells do not judge from their own mappings: per cell, those of its hosts mapped elsewhere; and those no cell holds. */
export interface MappingSplit {
  readonly elsewhere: ReadonlyArray<readonly HostMappingRec[]>;
  readonly unheld: readonly HostMappingRec[];
  readonly hostSeen: boolean;
}

export async function splitHostMappings(api: Knex, mappings: readonly CellMapping[], cells: readonly CellMapping[], keys: CloudKeys, host?: string): Promise<MappingSplit> {
  const elsewhere: HostMappingRec[][] = cells.map(() => []);
  const unheld: HostMappingRec[] = [];
  let hostSeen = false;
  await eachHostMapping(api, new Map(mappings.map((m) => [m.id, m.uuid])), (m) => {
    const key = hostKey(m.host);
    if (key === host) hostSeen = true;
    const owner = keys.hosts.ownerOf(key);
    if (owner === NO_OWNER) unheld.push(m);
    else if (cells[owner]?.uuid !== m.cellUuid) elsewhere[owner]?.push(m);
  });
  return { elsewhere, unheld, hostSeen };
}

/** Each provider's cell (by index), or NO_OWNER for the providers no node names; in id order. */
export class ProviderOwners {
  private ids = new Int32Array(1024);
  /** The owner plus one (0: NO_OWNER), in 16 bits as KeyOwners holds owners. */
  private owners = new Uint16Array(1024);
  private count = 0;

  push(id: number, owner: number): void {
    if (this.count === this.ids.length) {
      const ids = new Int32Array(this.count * 2);
      const owners = new Uint16Array(this.count * 2);
      ids.set(this.ids);
      owners.set(this.owners);
      this.ids = ids;
      this.owners = owners;
    }
    this.ids[this.count] = id;
    this.owners[this.count] = owner + 1;
    this.count += 1;
  }

  /** The provider's owner; undefined for an id the sweep did not see (made since). */
  ownerOf(id: number): number | undefined {
    let lo = 0;
    let hi = this.count - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.ids[mid] as number;
      if (at < id) lo = mid + 1;
      else if (at > id) hi = mid - 1;
      else return (this.owners[mid] as number) - 1;
    }
    return undefined;
  }

  /** The ids of one owner's providers, in id order. */
  idsOf(owner: number): number[] {
    const out: number[] = [];
    for (let j = 0; j < this.count; j++) if (this.owners[j] === owner + 1) out.push(this.ids[j] as number);
    return out;
  }
}

/**
 * Every provider's cell: its root's, by the root's uuid and name (its own,
 * when its root row is missing). A provider whose own uuid or name is another
 * cell's node's, or a node's under a root no node names, or a root two cells
 * name, ends the sweep: its tree would be judged in two parts.
 */
export async function splitProviders(placement: Knex, keys: CloudKeys): Promise<ProviderOwners | Shared> {
  const out = new ProviderOwners();
  let shared: string | undefined;
  const ownerBy = (uuid: string, name: string | null): number => oneOwner([keys.nodeUuids.ownerOf(uuid), name === null ? NO_OWNER : keys.names.ownerOf(name.toLowerCase())]);
  await eachProviderKeys(placement, (rows) => {
    for (const r of rows) {
      if (shared !== undefined) return;
      const own = ownerBy(r.uuid, r.name);
      const owner = r.rootUuid === null ? own : ownerBy(r.rootUuid, r.rootName);
      if (owner === SHARED || own === SHARED || (own !== NO_OWNER && own !== owner)) shared = `resource provider ${r.uuid} belongs to nodes of two cells, or its tree does`;
      out.push(r.id, owner);
    }
  });
  return shared === undefined ? out : { shared };
}

/** The one owner the keys name (NO_OWNER when none does), or SHARED. */
function oneOwner(owners: readonly number[]): number {
  let one = NO_OWNER;
  for (const o of owners) {
    if (o === NO_OWNER) continue;
    if (o === SHARED || (one !== NO_OWNER && o !== one)) return SHARED;
    one = o;
  }
  return one;
}
