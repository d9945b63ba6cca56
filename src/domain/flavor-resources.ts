// The resources an instance's embedded flavor asks Placement for, as
// nova.scheduler.utils.resources_from_flavor computes them for
// `nova-manage placement heal_allocations` (Zed): a RequestSpec made of the
// flavor alone (no image, so image properties never count) and is_bfv.
//  - `resources[$S]:RC=N` extra specs first, in their order, each group
//    summed into one dict (merged_resources); a bad class or amount is
//    ignored, as RequestGroup.add_resource ignores it with a warning;
//  - hw:cpu_policy=dedicated: PCPU = vcpus (+1 with
//    hw:emulator_threads_policy=isolate) instead of VCPU;
//  - then VCPU, MEMORY_MB and DISK_GB from the flavor unless an extra spec
//    already set them; DISK_GB = ephemeral + ceil(swap MB / 1024) + root
//    (root only when not volume-backed);
//  - zero amounts are dropped (strip_zeros): `resources:VCPU=0` gives no row.
// What needs more than the flavor (hw:cpu_policy=mixed, hw:mem_encryption,
// hw:pmem) is reported as unsupported rather than guessed.
import { STANDARD_RESOURCE_CLASSES } from './resource-classes.js';

export interface EmbeddedFlavor {
  readonly vcpus: number;
  readonly memoryMb: number;
  readonly rootGb: number;
  readonly ephemeralGb: number;
  /** MB */
  readonly swap: number;
  /** In the order Nova stored them. */
  readonly extraSpecs: ReadonlyArray<readonly [string, string]>;
}

export type FlavorResources =
  | { readonly ok: true; readonly resources: ReadonlyArray<readonly [string, number]> }
  | { readonly ok: false; readonly reason: string };

/**
 * Parse instance_extra.flavor ({"cur": Flavor primitive, "old", "new"});
 * undefined when it is missing or not a flavor.
 */
export function parseEmbeddedFlavor(text: string | null): EmbeddedFlavor | undefined {
  if (text === null || text === '') return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return undefined;
  }
  const cur = field(doc, 'cur');
  const data = field(cur, 'nova_object.data');
  if (typeof data !== 'object' || data === null) return undefined;
  const num = (k: string, dflt?: number): number | undefined => {
    const v = field(data, k);
    if (v === undefined || v === null) return dflt;
    return typeof v === 'number' && Number.isInteger(v) ? v : undefined;
  };
  const vcpus = num('vcpus');
  const memoryMb = num('memory_mb');
  const rootGb = num('root_gb');
  const ephemeralGb = num('ephemeral_gb', 0);
  const swap = num('swap', 0);
  if (vcpus === undefined || memoryMb === undefined || rootGb === undefined || ephemeralGb === undefined || swap === undefined) return undefined;
  const specs = field(data, 'extra_specs');
  const extraSpecs: Array<[string, string]> = [];
  if (typeof specs === 'object' && specs !== null && !Array.isArray(specs)) {
    for (const [k, v] of Object.entries(specs as Record<string, unknown>)) extraSpecs.push([k, typeof v === 'string' ? v : String(v)]);
  }
  return { vcpus, memoryMb, rootGb, ephemeralGb, swap, extraSpecs };
}

function field(obj: unknown, key: string): unknown {
  return typeof obj === 'object' && obj !== null ? (obj as Record<string, unknown>)[key] : undefined;
}

export function extraSpec(flavor: EmbeddedFlavor, key: string): string | undefined {
  return flavor.extraSpecs.find(([k]) => k === key)?.[1];
}

const XS_KEYPAT = /^(resources|trait)([a-zA-Z0-9_-]{1,64})?:(.*)$/s;
const STANDARD = new Set<string>(STANDARD_RESOURCE_CLASSES);

/** Python's int() of a str: optional sign and surrounding whitespace, decimal digits (underscores between digits). */
function pythonInt(text: string): number | undefined {
  const t = text.trim();
  if (!/^[+-]?\d+(?:_\d+)*$/.test(t)) return undefined;
  const n = Number(t.replaceAll('_', ''));
  return Number.isSafeInteger(n) ? n : undefined;
}

export function resourcesFromFlavor(flavor: EmbeddedFlavor, isBfv: boolean): FlavorResources {
  const cpuPolicy = extraSpec(flavor, 'hw:cpu_policy');
  if (cpuPolicy === 'mixed') return { ok: false, reason: 'hw:cpu_policy=mixed (dedicated CPU masks) is not computed by nova-reconcile' };
  if (cpuPolicy !== undefined && cpuPolicy !== 'dedicated' && cpuPolicy !== 'shared') return { ok: false, reason: `hw:cpu_policy=${cpuPolicy} is not a valid CPU policy` };
  const memEnc = extraSpec(flavor, 'hw:mem_encryption');
  if (memEnc !== undefined && ['1', 't', 'true', 'on', 'y', 'yes'].includes(memEnc.trim().toLowerCase()))
    return { ok: false, reason: 'hw:mem_encryption needs image properties, which heal_allocations has no access to' };
  if (extraSpec(flavor, 'hw:pmem') !== undefined) return { ok: false, reason: 'hw:pmem (persistent memory namespaces) is not computed by nova-reconcile' };

  // Request groups in creation order, each an insertion-ordered map.
  const groups = new Map<string, Map<string, number>>();
  const add = (rc: string, amount: number, group = ''): void => {
    let g = groups.get(group);
    if (g === undefined) groups.set(group, (g = new Map()));
    g.set(rc, amount);
  };
  for (const [key, value] of flavor.extraSpecs) {
    const m = XS_KEYPAT.exec(key);
    if (m === null || m[1] !== 'resources') continue;
    const rc = m[3] ?? '';
    if (!(rc.startsWith('CUSTOM_') || STANDARD.has(rc))) continue;
    const amount = pythonInt(value);
    if (amount === undefined || amount < 0) continue;
    add(rc, amount, m[2] ?? '');
  }
  if (cpuPolicy === 'dedicated') {
    const isolate = extraSpec(flavor, 'hw:emulator_threads_policy') === 'isolate';
    add('PCPU', flavor.vcpus + (isolate ? 1 : 0));
  }
  const merged = (): Map<string, number> => {
    const out = new Map<string, number>();
    for (const g of groups.values()) for (const [rc, n] of g) out.set(rc, (out.get(rc) ?? 0) + n);
    return out;
  };
  const before = merged();
  if (!before.has('VCPU') && !before.has('PCPU')) add('VCPU', flavor.vcpus);
  if (!before.has('MEMORY_MB')) add('MEMORY_MB', flavor.memoryMb);
  if (!before.has('DISK_GB')) {
    const disk = flavor.ephemeralGb + Math.ceil(flavor.swap / 1024) + (isBfv ? 0 : flavor.rootGb);
    if (disk !== 0) add('DISK_GB', disk);
  }
  // strip_zeros per group, then merge.
  for (const [id, g] of groups) {
    for (const [rc, n] of g) if (n === 0) g.delete(rc);
    if (g.size === 0) groups.delete(id);
  }
  return { ok: true, resources: [...merged()] };
}
