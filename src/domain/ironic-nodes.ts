// Ironic truth from an operator's file (--ironic-nodes FILE): either the JSON
// of `openstack baremetal node list -f json` (title-case column names, or the
// API's lower-case field names with `--fields`), the Ironic API's own
// `{"nodes": [...]}`, or plain text with one node uuid per line. The file
// decides which compute nodes get deleted, so anything doubtful is refused
// with one line naming the file and the problem, never guessed at.
import type { ComputeNodeRec, IronicNodeRec } from './model.js';
import { ReconcileError } from '../errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The canonical 8-4-4-4-12 form that Nova and Ironic store. */
/**
 * An ironic compute node row whose uuid is its hypervisor_hostname, the ironic
 * node's uuid: the row Nova (Rocky+) creates, and the only one Nova 27.0.0+
 * looks up, restores and re-homes.
 */
export function keyedByIronicNode(n: Pick<ComputeNodeRec, 'hypervisorType' | 'uuid' | 'hypervisorHostname'>): boolean {
  return n.hypervisorType === 'ironic' && n.uuid !== null && n.hypervisorHostname !== null && n.uuid.toLowerCase() === n.hypervisorHostname.toLowerCase();
}

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

const HINT = 'give the output of `openstack baremetal node list -f json`, or one node UUID per line';

/** Column names of the openstack client first, then the API's field names. */
const FIELDS = {
  uuid: ['UUID', 'uuid'],
  instanceUuid: ['Instance UUID', 'instance_uuid'],
  maintenance: ['Maintenance', 'maintenance'],
  provisionState: ['Provisioning State', 'provision_state'],
  conductorGroup: ['Conductor Group', 'conductor_group'],
} as const;

export function parseIronicNodes(text: string, fileName: string): IronicNodeRec[] {
  const body = text.replace(/^\uFEFF/, '');
  const fail = (problem: string): never => {
    throw new ReconcileError('input', `--ironic-nodes ${fileName}: ${problem}`, { hint: HINT });
  };
  // An empty export is implausible ground truth (exit 2, "could not run"),
  // not a usage error: it is what a failed or wrongly scoped
  // `openstack baremetal node list` leaves, and it would make every ironic
  // compute node look deleted.
  if (body.trim() === '') throw implausibleList(`--ironic-nodes ${fileName}`, 'the file is empty');
  const first = body.trimStart()[0];
  const nodes = first === '[' || first === '{' ? parseJsonNodes(body, fail) : parseUuidLines(body, fileName, fail);
  // The same node listed twice is still one node.
  const unique = new Map<string, IronicNodeRec>();
  for (const n of nodes) if (!unique.has(n.uuid)) unique.set(n.uuid, n);
  return [...unique.values()];
}

type Fail = (problem: string) => never;

/**
 * An ironic node list that cannot be the truth of this deployment: never a
 * verdict that every node is gone. `source` names it: "--ironic-nodes FILE"
 * or "the Ironic API at URL".
 */
export function implausibleList(source: string, problem: string): ReconcileError {
  return new ReconcileError('implausible', `${source}: ${problem}; an empty or foreign node list is never taken as "every node is gone"`, {
    hint: 'check the export or [ironic] (region, project scope, credentials) and re-run; [nova_reconcile] min_ironic_fraction sets how much of the known nodes the list must hold',
  });
}

/**
 * The share of the cells' live ironic compute nodes (by hypervisor_hostname,
 * which is the ironic node uuid) that the list holds. A list for another
 * deployment holds none; a project-scoped listing holds that project's share.
 * `known` is 0 when the cells know no ironic node.
 */
export function ironicListCoverage(listed: readonly IronicNodeRec[], knownHypervisorHostnames: Iterable<string>): { known: number; held: number } {
  const inList = new Set(listed.map((n) => n.uuid));
  const known = new Set<string>();
  for (const h of knownHypervisorHostnames) known.add(h.toLowerCase());
  let held = 0;
  for (const h of known) if (inList.has(h)) held += 1;
  return { known: known.size, held };
}

function parseJsonNodes(body: string, fail: Fail): IronicNodeRec[] {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch (err) {
    return fail(`not valid JSON (${describeJsonError(err)})`);
  }
  const list = isObject(doc) && Array.isArray(doc['nodes']) ? doc['nodes'] : doc;
  if (!Array.isArray(list)) return fail('expected a JSON list of nodes');
  // An explicit `[]` parses; whether it is plausible is decided against the
  // nodes the cells know (operations/read/cells.ts, min_ironic_fraction).
  return list.map((entry: unknown, i) => parseNode(entry, `entry ${i + 1}`, fail));
}

function parseNode(entry: unknown, where: string, fail: Fail): IronicNodeRec {
  if (!isObject(entry)) return fail(`${where} is not an object`);
  const uuid = pick(entry, FIELDS.uuid);
  if (uuid === undefined || uuid === null || uuid === '') return fail(`${where} has no UUID`);
  if (typeof uuid !== 'string' || !isUuid(uuid)) return fail(`${where}: its UUID is not a valid UUID (${shape(uuid)})`);
  const instance = pick(entry, FIELDS.instanceUuid);
  if (instance !== undefined && instance !== null && instance !== '' && (typeof instance !== 'string' || !isUuid(instance))) {
    return fail(`${where}: its instance UUID is not a valid UUID (${shape(instance)})`);
  }
  return {
    uuid: uuid.toLowerCase(),
    instanceUuid: typeof instance === 'string' && instance !== '' ? instance.toLowerCase() : null,
    maintenance: parseBoolean(pick(entry, FIELDS.maintenance)),
    provisionState: optionalString(pick(entry, FIELDS.provisionState)),
    conductorGroup: optionalString(pick(entry, FIELDS.conductorGroup)),
  };
}

function parseUuidLines(body: string, fileName: string, fail: Fail): IronicNodeRec[] {
  const out: IronicNodeRec[] = [];
  body.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') return;
    if (!isUuid(line)) fail(`line ${i + 1}: the line is not a valid UUID (${shape(line)})`);
    out.push({ uuid: line.toLowerCase(), instanceUuid: null, maintenance: null, provisionState: null, conductorGroup: null });
  });
  if (out.length === 0) throw implausibleList(`--ironic-nodes ${fileName}`, 'the file lists no node UUIDs (only comments and blank lines)');
  return out;
}

/**
 * What a bad value looks like, without its text: the file may be the wrong
 * one (a nova.conf, a password file), so its content is never echoed.
 */
function shape(value: unknown): string {
  if (typeof value === 'string') return `${value.length} characters, expected 8-4-4-4-12 hex digits; the text is not shown`;
  return `a JSON ${value === null ? 'null' : Array.isArray(value) ? 'list' : typeof value}, expected a string`;
}

/** V8 quotes the start of the input in its messages ("...", "[secret]" is not valid JSON); keep only the position. */
function describeJsonError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (!message.includes('"')) return message;
  const position = /at position (\d+)/.exec(message)?.[1];
  return position === undefined ? 'unexpected character' : `unexpected character at position ${position}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pick(entry: Record<string, unknown>, names: readonly string[]): unknown {
  for (const name of names) if (name in entry) return entry[name];
  return undefined;
}

/** The client prints booleans; `-f value` exports and hand-written files say "True"/"False". */
function parseBoolean(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (v === 'true') return true;
    if (v === 'false') return false;
  }
  return null;
}

function optionalString(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
