// [nova_reconcile] ironic_partitions: which nova-compute hosts serve which
// Ironic conductor group (the shape src/domain/partitions.ts judges by).

/** A conductor group (lower-cased; "*" for computes without partition_key) and its lower-cased hosts. */
export interface PartitionSetting {
  readonly group: string;
  readonly hosts: readonly string[];
}

/**
 * "cg-a: compute-a1, compute-a2; cg-b: compute-b1; *: compute-0": partitions
 * separated by ";", a group and its hosts by ":", hosts by "," or spaces.
 * Returns the partitions or the problems (one per bad entry).
 */
export function parsePartitions(text: string): { partitions: PartitionSetting[]; problems: string[] } {
  const partitions: PartitionSetting[] = [];
  const problems: string[] = [];
  for (const raw of text.split(';')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const colon = entry.indexOf(':');
    if (colon < 0) {
      problems.push(`"${entry.slice(0, 40)}" is not GROUP: HOST,HOST`);
      continue;
    }
    const group = entry.slice(0, colon).trim().toLowerCase();
    const hosts = entry
      .slice(colon + 1)
      .split(/[\s,]+/)
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== '');
    // Ironic's group names: letters, digits, _ - . (api/controllers/v1/utils.py); "" is the default group.
    if (group !== '*' && !/^[a-z0-9_.-]*$/.test(group)) problems.push(`"${group.slice(0, 40)}" is not a conductor group name`);
    else if (hosts.length === 0) problems.push(`conductor group "${group}" names no host`);
    else if (partitions.some((p) => p.group === group)) problems.push(`conductor group "${group}" is given twice`);
    else partitions.push({ group, hosts: [...new Set(hosts)] });
  }
  return { partitions, problems };
}
