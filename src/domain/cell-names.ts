// How human text names a cell: the one rule, used by the plans (unit titles,
// refusals, change lines), the audit (its cell column and its summaries) and
// the circuit breaker's messages, so that a cell reads the same everywhere.
//
// A cell is named by its name when that name is its own: non-empty, shared by
// no other cell of cell_mappings (names are not unique there), and not
// shaped like a uuid (it would read as one, and `--cell` takes a uuid-shaped
// value as a uuid). Otherwise it is named by its uuid. So a name in a message
// always finds exactly its cell with `--cell NAME` (plan-scope.ts resolveCell),
// and a uuid is printed only where a name would be ambiguous or missing.
//
// Only human text uses it: keys, ids, JSON's cell_uuid and the commands a
// suggestion prints keep the uuid.
import { isUuid } from './ironic-nodes.js';
import type { CellRec } from './model.js';

/** The cell's name in human text, by its uuid: "cell1", or the uuid. */
export type CellNamer = (cellUuid: string) => string;

/** The naming of `cells` (every cell mapping: a name is only a name when no other cell has it). */
export function cellNamer(cells: ReadonlyArray<Pick<CellRec, 'uuid' | 'name'>>): CellNamer {
  const holders = new Map<string, number>();
  for (const c of cells) if (c.name !== null) holders.set(c.name, (holders.get(c.name) ?? 0) + 1);
  const byUuid = new Map<string, string>();
  for (const c of cells) {
    const name = c.name;
    if (name === null || name.trim() === '' || isUuid(name.trim()) || holders.get(name) !== 1) continue;
    byUuid.set(c.uuid.toLowerCase(), name);
  }
  return (cellUuid) => byUuid.get(cellUuid.toLowerCase()) ?? cellUuid;
}
