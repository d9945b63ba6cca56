// What breaks Nova 27.0.0+ (2023.1) and not Zed. From 27.0.0 Nova's resource
// tracker knows an ironic compute node only by the ironic node's uuid: it
// un-deletes a soft-deleted row of that uuid, and creates the node's provider
// under that uuid and the node's name. From 28.0.0 an instance is linked to
// its compute node row (instances.compute_id). These findings are made only
// when the databases say such a release (nova-release.ts): on Zed the same
// rows are right.
import type { Finding } from '../finding.js';
import type { ComputeNodeRec } from '../model.js';
import { NOVA_IRONIC_BY_UUID, novaKnowsIronicByUuid } from '../nova-release.js';
import { hostKey, type SnapshotIndex } from '../snapshot-index.js';
import { keyedByIronicNode } from '../ironic-nodes.js';


/** Every finding of this file, on the index of a snapshot whose release is 27.0.0+. */
export function findNewerNovaProblems(ix: SnapshotIndex): Finding[] {
  if (!novaKnowsIronicByUuid(ix.snapshot.release)) return [];
  return [...findRetiredNodeUuidRows(ix), ...findProviderUuidMismatches(ix), ...findComputeIdMismatches(ix)];
}

/** A live random-uuid row of an ironic node while the row of the node's uuid is soft-deleted. */
function findRetiredNodeUuidRows(ix: SnapshotIndex): Finding[] {
  const out: Finding[] = [];
  for (const deleted of ix.snapshot.computeNodes) {
    if (!deleted.deleted || !keyedByIronicNode(deleted)) continue;
    const hh = (deleted.hypervisorHostname as string).toLowerCase();
    const live = (ix.liveNodesByHypervisorHostname.get(hh) ?? []).filter((n) => n.cellUuid === deleted.cellUuid);
    if (live.length === 0 || live.some(keyedByIronicNode)) continue;
    const sameHost = live.filter((n) => hostKey(n.host) === hostKey(deleted.host));
    out.push({
      kind: 'node-uuid-row-deleted',
      cellUuid: deleted.cellUuid,
      summary:
        `ironic node ${deleted.hypervisorHostname ?? '-'}: the row Nova ${NOVA_IRONIC_BY_UUID}.0.0+ looks for (uuid ${deleted.uuid ?? '-'}, id ${deleted.id}) is soft-deleted, ` +
        `while live compute node ${live.map((n) => `${n.uuid ?? `id ${n.id}`} on ${n.host ?? '-'}`).join(', ')} has another uuid; nova-compute un-deletes it on its next periodic` +
        (sameHost.length > 0 ? ` and fails on uniq_compute_nodes0host0hypervisor_hostname0deleted every time` : ''),
      objects: {
        hypervisor_hostname: deleted.hypervisorHostname,
        deleted_node_id: deleted.id,
        deleted_node_uuid: deleted.uuid,
        host: deleted.host,
        live_node_uuids: live.map((n) => n.uuid ?? `id ${n.id}`),
        live_hosts: live.map((n) => n.host ?? '-'),
      },
      suggestion: `nova-reconcile compute_node rebalance --node ${deleted.hypervisorHostname ?? '-'}`,
    });
  }
  return out;
}

/**
 * A provider named after an ironic node whose uuid is not the uuid of the
 * node's live row, the row whose uuid is the node's (the provider Nova 27+
 * must create under that name gets a 409).
 */
function findProviderUuidMismatches(ix: SnapshotIndex): Finding[] {
  const out: Finding[] = [];
  for (const [hh, nodes] of ix.liveNodesByHypervisorHostname) {
    const provider = ix.providerByName.get(hh);
    if (provider === undefined) continue;
    for (const node of nodes) {
      if (!keyedByIronicNode(node) || provider.uuid.toLowerCase() === (node.uuid as string).toLowerCase()) continue;
      const owner = ix.liveNodeByUuid.get(provider.uuid) ?? ix.deletedNodeByUuid.get(provider.uuid);
      out.push({
        kind: 'provider-uuid-mismatch',
        cellUuid: node.cellUuid,
        summary:
          `resource provider ${provider.uuid} is named after ironic node ${node.hypervisorHostname ?? '-'}, whose live compute node is ${node.uuid ?? '-'} on ${node.host ?? '-'}: ` +
          `Nova ${NOVA_IRONIC_BY_UUID}.0.0+ cannot create the provider ${node.uuid} under that name (409)` +
          (owner === undefined ? '' : `; the provider's uuid is compute node ${owner.id}'s${owner.deleted ? ' (soft-deleted)' : ''}`),
        objects: {
          hypervisor_hostname: node.hypervisorHostname,
          node_uuid: node.uuid,
          host: node.host,
          provider_id: provider.id,
          provider_uuid: provider.uuid,
          provider_name: provider.name,
        },
        suggestion: nodes.filter((n) => n.cellUuid === node.cellUuid).length > 1 || owner !== undefined ? `nova-reconcile compute_node rebalance --node ${node.hypervisorHostname ?? '-'}` : 'nova-reconcile placement cleanup_providers',
      });
    }
  }
  return out;
}

/** An instance whose compute_id names a soft-deleted row, or a row of another node or host (Nova 28.0.0+). */
function findComputeIdMismatches(ix: SnapshotIndex): Finding[] {
  const byId = new Map<string, ComputeNodeRec>();
  for (const n of ix.snapshot.computeNodes) byId.set(`${n.cellUuid}|${n.id}`, n);
  const out: Finding[] = [];
  for (const inst of ix.snapshot.instances) {
    if (inst.computeId === undefined || inst.computeId === null) continue;
    const row = byId.get(`${inst.cellUuid}|${inst.computeId}`);
    const foreign =
      row !== undefined &&
      ((row.hypervisorHostname ?? '').toLowerCase() !== (inst.node ?? '').toLowerCase() || hostKey(row.host) !== hostKey(inst.host));
    if (row !== undefined && !row.deleted && !foreign) continue;
    const what = row === undefined ? 'no compute node row' : row.deleted ? `soft-deleted compute node ${row.uuid ?? row.id}` : `compute node ${row.uuid ?? row.id} of node ${row.hypervisorHostname ?? '-'} on ${row.host ?? '-'}`;
    const ironic = row?.hypervisorType === 'ironic' || (inst.node !== null && (ix.liveNodesByHypervisorHostname.get(inst.node.toLowerCase()) ?? []).some((n) => n.hypervisorType === 'ironic'));
    out.push({
      kind: 'instance-compute-id-mismatch',
      cellUuid: inst.cellUuid,
      summary: `instance ${inst.uuid} on ${inst.host ?? '-'} (node ${inst.node ?? '-'}) has compute_id ${inst.computeId}, which is ${what}`,
      objects: { instance_uuid: inst.uuid, host: inst.host, node: inst.node, compute_id: inst.computeId, compute_node_deleted: row?.deleted ?? null },
      suggestion: ironic
        ? `nova-reconcile compute_node rebalance --node ${inst.node ?? '-'}`
        : `let nova-compute on ${inst.host ?? '-'} run its update_available_resource: it corrects compute_id for the instances of its nodes`,
    });
  }
  return out;
}
