// Scenarios: named deployment states for the sandbox, the tests, the demo and
// the conformance tier. A scenario only writes hosts, nodes, instances and
// placement data; it never creates cell_mappings, because the conformance
// tier runs scenarios against databases that the real nova-manage built and
// mapped. Everything is deterministic: fixed uuids, timestamps relative to
// the moment of populating (services heartbeat "now").
//
// To add a scenario, write src/sandbox/scenarios/<name>.ts exporting a
// Scenario and list it in SCENARIOS below.
import type { Knex } from 'knex';
import { deletedIronicNodeScenario } from './scenarios/deleted-ironic-node.js';
import { emptyScenario } from './scenarios/empty.js';
import { ironicFailoverRenamedScenario, ironicFailoverScenario } from './scenarios/ironic-failover.js';
import { ironicHaScenario } from './scenarios/ironic-ha.js';
import { libvirtScenario } from './scenarios/libvirt.js';
import { staleProviderScenario } from './scenarios/stale-provider.js';

export interface ScenarioDatabases {
  readonly api: Knex;
  readonly cells: { readonly cell1: Knex; readonly cell2: Knex };
  readonly placement: Knex;
  /** cell_mappings ids, for host_mappings and instance_mappings rows. */
  readonly cellIds: { readonly cell0: number; readonly cell1: number; readonly cell2: number };
  readonly cellUuids: { readonly cell0: string; readonly cell1: string; readonly cell2: string };
}

export interface Scenario {
  readonly name: string;
  /** One line, for `sandbox create --help`. */
  readonly summary: string;
  /** What the demo and docs say about it: one paragraph per entry. */
  readonly story: readonly string[];
  /**
   * nova-reconcile commands worth running next, without the
   * `nova-reconcile --config-file DIR/nova.conf` prefix.
   */
  readonly tryNext?: readonly string[];
  /**
   * Files the story needs, written into DIR by name (e.g. the ironic node
   * list for --ironic-nodes). `{dir}` in tryNext stands for DIR.
   */
  readonly files?: Readonly<Record<string, string>>;
  populate(dbs: ScenarioDatabases): Promise<void>;
}

export const SCENARIOS: readonly Scenario[] = Object.freeze([
  emptyScenario,
  ironicHaScenario,
  libvirtScenario,
  deletedIronicNodeScenario,
  staleProviderScenario,
  ironicFailoverScenario,
  ironicFailoverRenamedScenario,
]);

export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}

export function scenarioNames(): string[] {
  return SCENARIOS.map((s) => s.name);
}
