// The ironic truth the operator gave (--ironic-nodes FILE or the Ironic API),
// and nova.conf's Ironic partitions and shard, for the snapshot.
import type { IronicSettings } from '../../config/ironic-settings.js';
import type { Deployment } from '../../db/deployment-databases.js';
import { parseIronicNodes } from '../../domain/ironic-nodes.js';
import type { IronicNodeRec, IronicOrigin, Snapshot } from '../../domain/model.js';
import { ReconcileError } from '../../errors.js';
import { describeFileError, errnoOf, readTextFile } from '../../files.js';
import { listIronicNodes } from '../../ironic/list-nodes.js';

/** Where the ironic truth comes from; absent means none was given. */
export type IronicSource =
  /** --ironic-nodes FILE */
  | { readonly kind: 'file'; readonly file: string }
  /** The Ironic API, reached as nova.conf [ironic] says (src/ironic/). */
  | { readonly kind: 'api'; readonly settings: IronicSettings }
  /** Already read (before the apply lock is taken, so a failing Ironic holds nothing). */
  | { readonly kind: 'read'; readonly nodes: readonly IronicNodeRec[]; readonly origin: IronicOrigin };

/** The whole node list, from the file or the API; an interrupted listing throws (nothing is judged on part of it). */
export async function readIronicTruth(source: IronicSource, progress: (line: string) => void): Promise<{ nodes: IronicNodeRec[]; origin: IronicOrigin }> {
  if (source.kind === 'read') return { nodes: [...source.nodes], origin: source.origin };
  if (source.kind === 'file') {
    const nodes = await readIronicNodesFile(source.file);
    return { nodes, origin: { kind: 'file', label: `--ironic-nodes ${source.file}`, location: source.file, nodes: nodes.length } };
  }
  const listing = await listIronicNodes(source.settings, { progress });
  return {
    nodes: [...listing.nodes],
    origin: { kind: 'api', label: `the Ironic API at ${listing.endpoint}`, location: listing.endpoint, nodes: listing.nodes.length },
  };
}

/** An export of 300,000 nodes is about 50 MB. */
const IRONIC_NODES_MAX_BYTES = 256 * 1024 * 1024;

/** Read and parse --ironic-nodes FILE; every problem is one ReconcileError('input') line. */
export async function readIronicNodesFile(path: string): Promise<IronicNodeRec[]> {
  let text: string;
  try {
    text = readTextFile(path, IRONIC_NODES_MAX_BYTES);
  } catch (err) {
    const why = errnoOf(err) === 'ENOENT' ? 'no such file' : describeFileError(err);
    throw new ReconcileError('input', `--ironic-nodes ${path}: cannot read the file (${why})`, { cause: err });
  }
  return parseIronicNodes(text, path);
}

export function ironicSettingsOf(reconcile: Deployment['config']['reconcile']): Pick<Snapshot, 'ironicPartitions' | 'ironicShard'> {
  const { ironicPartitions, ironicShard } = reconcile;
  return { ...(ironicPartitions === undefined ? {} : { ironicPartitions }), ...(ironicShard === undefined ? {} : { ironicShard }) };
}
