// Pure planning for cell_v2 discover_hosts. The database has already decided
// which candidate host strings match which existing mapping (collation); this
// module turns those facts into what to create, what to mark mapped, and the
// per-candidate events that nova-manage's verbose output is made of.

export interface DiscoveryCandidate {
  /** compute_nodes.id, or services.id on the --by-service path. */
  readonly id: number;
  /** compute_nodes.uuid; null on the --by-service path. */
  readonly uuid: string | null;
  readonly host: string;
}

export interface HostClassification {
  /** Hosts with no mapping at all, exact strings, in first-seen order. */
  readonly unmapped: readonly string[];
  /** Hosts already mapped to this cell. */
  readonly inCell: ReadonlySet<string>;
  /** Hosts mapped to another cell: never re-pointed, only reported. */
  readonly elsewhere: ReadonlyMap<string, number>;
}

/** `mappedTo`: each candidate host string that has a mapping → that mapping's cell id (the database matched them). */
export function classifyHosts(hosts: readonly string[], mappedTo: ReadonlyMap<string, number>, cellId: number): HostClassification {
  const unmapped: string[] = [];
  const unmappedSeen = new Set<string>();
  const inCell = new Set<string>();
  const elsewhere = new Map<string, number>();
  for (const host of hosts) {
    const cell = mappedTo.get(host);
    if (cell === undefined) {
      if (unmappedSeen.has(host)) continue;
      unmappedSeen.add(host);
      unmapped.push(host);
    } else if (cell === cellId) inCell.add(host);
    else elsewhere.set(host, cell);
  }
  return { unmapped, inCell, elsewhere };
}

export interface DiscoveryEvent {
  readonly host: string;
  readonly uuid: string | null;
  /** True for the one candidate whose host mapping this run created. */
  readonly created: boolean;
}

/**
 * Nova walks candidates in order and creates a mapping at the first candidate
 * of each unmapped host; later candidates of that host find it and stay
 * silent. `created` holds the exact host strings this run inserted.
 */
export function buildDiscoveryEvents(candidates: readonly DiscoveryCandidate[], created: ReadonlySet<string>): DiscoveryEvent[] {
  const announced = new Set<string>();
  return candidates.map((c) => {
    const isCreator = created.has(c.host) && !announced.has(c.host);
    if (isCreator) announced.add(c.host);
    return { host: c.host, uuid: c.uuid, created: isCreator };
  });
}

/** Nodes to flag mapped = 1: every candidate whose host now maps to this cell. */
export function selectNodesToMark(candidates: readonly DiscoveryCandidate[], mappedHere: ReadonlySet<string>): number[] {
  return candidates.filter((c) => mappedHere.has(c.host)).map((c) => c.id);
}

/**
 * Bug 2085135: a live node with mapped = 1 whose host has no mapping is
 * invisible to nova's node path. Keep the lowest-id node of each such host so
 * it can be treated as a candidate. Nodes come by id; those without a host
 * are left out.
 */
export function firstNodePerHost<T extends { readonly host: string | null }>(nodes: readonly T[]): Array<T & { readonly host: string }> {
  const seen = new Set<string>();
  const out: Array<T & { readonly host: string }> = [];
  for (const n of nodes) {
    if (!hasHost(n) || seen.has(n.host)) continue;
    seen.add(n.host);
    out.push(n);
  }
  return out;
}

function hasHost<T extends { readonly host: string | null }>(n: T): n is T & { readonly host: string } {
  return n.host !== null;
}
