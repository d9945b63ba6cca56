// The command table (src/dispatch/command-modules.ts) is the one list of
// commands: the registry, the dispatcher's index, the lazy loader and the man
// page's schema list are derived from it, and the README's command table and
// the schemas/ folder must agree with it.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { jsonSchemaIndex } from '../../src/cli/json-contract.js';
import { commandIndex } from '../../src/dispatch/command-index.js';
import { COMMAND_MODULES, loadCommandSpec } from '../../src/dispatch/command-modules.js';
import { COMMANDS } from '../../src/dispatch/registry.js';

const TABLE = COMMAND_MODULES.map((m) => m.path.join(' '));
const pathOf = (c: { readonly path: readonly string[] }): string => c.path.join(' ');

describe('the command table', () => {
  it("names each command by its spec's own words, and the registry holds its specs in its order", async () => {
    for (const m of COMMAND_MODULES) expect(pathOf(await m.load())).toBe(m.path.join(' '));
    expect(new Set(TABLE).size).toBe(TABLE.length);
    expect(COMMANDS.map(pathOf)).toEqual(TABLE);
    expect(commandIndex(COMMANDS).map(pathOf)).toEqual(TABLE);
  });

  it('loads a command from its own module, and nothing for a prefix of one or for unknown words', async () => {
    for (const c of COMMANDS.filter((c) => pathOf(c) !== 'completion')) expect(await loadCommandSpec(c.path)).toBe(c);
    expect(pathOf((await loadCommandSpec(['completion'])) ?? { path: [] })).toBe('completion');
    expect(await loadCommandSpec(['cell_v2'])).toBeUndefined();
    expect(await loadCommandSpec(['cell_v2', 'discover_hosts', 'extra'])).toBeUndefined();
  });
});

describe("the commands' JSON schemas", () => {
  const files = readdirSync(fileURLToPath(new URL('../../schemas/', import.meta.url))).map((f) => `schemas/${f}`);

  it('every file in schemas/ is listed once, as the document of one command or of one group of them', () => {
    const listed = jsonSchemaIndex(COMMANDS).flatMap(([, file]) => file.split(' ')[0] ?? []);
    expect([...listed].sort()).toEqual([...files].sort());
  });

  it('every schema a command names is a file in schemas/', () => {
    for (const c of COMMANDS) {
      for (const claim of c.jsonSchemas) expect(files).toContain(`schemas/${typeof claim === 'string' ? claim : claim.schema}.schema.json`);
    }
  });

  it('a schema several commands print is listed once, naming them', () => {
    const plan = jsonSchemaIndex(COMMANDS).find(([, file]) => file === 'schemas/plan.schema.json');
    expect(plan?.[0]).toBe('the plan commands (cell_v2 prune_host_mappings, compute_node cleanup_orphans, move, rebalance, restore, placement cleanup_providers)');
    expect(jsonSchemaIndex(COMMANDS)).toContainEqual(['cell_v2 discover_hosts', 'schemas/cell_v2-discover_hosts.schema.json (with --remap: schemas/plan.schema.json)']);
  });
});

/**
 * The commands the README's command table describes, in the order they first
 * appear: the one table with a header cell "command" whose every row starts
 * with a command of the table in backticks (a row may show one command's
 * variants; its command is the longest one its words begin with).
 */
function readmeCommands(readme: string, commands: readonly string[]): string[][] {
  const tables = readme.split(/\n(?!\|)/).map((block) => block.split('\n').filter((l) => l.startsWith('|')));
  const cells = (row: string): string[] => row.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
  const commandOf = (cell: string): string | undefined => {
    const words = /^`([^`]*)`/.exec(cell)?.[1]?.split(/\s+/) ?? [];
    return commands.filter((c) => c.split(' ').every((w, i) => words[i] === w)).sort((a, b) => b.length - a.length)[0];
  };
  return tables
    .filter(([header, , ...rows]) => header !== undefined && cells(header).includes('command') && rows.length > 0 && rows.every((r) => commandOf(cells(r)[0] ?? '') !== undefined))
    .map(([, , ...rows]) => [...new Set(rows.map((r) => commandOf(cells(r)[0] ?? '') ?? ''))]);
}

describe("the README's command table", () => {
  it('lists every command of the table, in its order, and no other', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readmeCommands(readme, TABLE)).toEqual([TABLE]);
  });

  it('is found by its header and rows', () => {
    const sample = '| command | what it does |\n| --- | --- |\n| `a b [--x]` | one |\n| `a b --y` | again |\n| `c` | two |\n\n| command | schema |\n| --- | --- |\n| the a commands | x |\n';
    expect(readmeCommands(sample, ['a b', 'c'])).toEqual([['a b', 'c']]);
    expect(readmeCommands(sample.replace('| `c` | two |\n', '| `d` | two |\n'), ['a b', 'c'])).toEqual([]);
  });
});
