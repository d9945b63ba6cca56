// What a scenario is: a named deployment state that writes its rows through
// the builders (builders.ts, rows.ts) into the databases it is given. The
// scenario files import this, and scenarios.ts lists them: no file imports
// the list it is in.
import type { Knex } from 'knex';

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
