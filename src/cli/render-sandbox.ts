// What `sandbox create` prints: what was built, the scenario's story, and the
// commands to try next, each spelled out with the sandbox's --config-file.
import type { JsonDocument } from './json-contract.js';
import { wrap } from './help.js';
import type { SandboxInfo } from '../sandbox/create-sandbox.js';
import { shellWord } from '../domain/text-and-maps.js';

const DEFAULT_NEXT = ['cell_v2 list_cells', 'cell_v2 discover_hosts --verbose', 'cell_v2 list_hosts'];


/**
 * The commands to try next, as full command lines that work when pasted:
 * `self` is how this tool was run (`nova-reconcile` when that is on PATH,
 * else `node /path/to/bin/nova-reconcile`).
 */
export function nextCommands(info: SandboxInfo, self = 'nova-reconcile'): string[] {
  const prefix = `${self} --config-file ${shellWord(info.configFile)}`;
  return (info.scenario.tryNext ?? DEFAULT_NEXT).map((c) => `${prefix} ${c.replaceAll('{dir}', shellWord(info.dir))}`);
}

export function renderSandboxReport(info: SandboxInfo, self = 'nova-reconcile'): string {
  const lines: string[] = [];
  lines.push(`${info.replaced ? 'Replaced the sandbox' : 'Created a sandbox'} in ${info.dir} with scenario ${info.scenario.name}.`, '');
  const rows: Array<[string, string]> = [
    ['configuration', info.configFile],
    ['API database', info.databases.api.path],
    ...info.cells.map((c): [string, string] => [`${c.name} database`, `${c.database.path}  (cell ${c.uuid})`]),
    ['placement database', info.databases.placement.path],
    ['journal', `${info.journalDir}/`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) lines.push(`  ${k.padEnd(width)}  ${v}`);
  lines.push('', `Scenario ${info.scenario.name}: ${info.scenario.summary}.`);
  for (const paragraph of info.scenario.story) lines.push('', ...wrap(paragraph, 76).map((l) => `  ${l}`));
  lines.push('', 'Try next:');
  for (const c of nextCommands(info, self)) lines.push(`  ${c}`);
  return lines.join('\n') + '\n';
}

/** The --format json document. */
export function sandboxReportJson(info: SandboxInfo, self = 'nova-reconcile'): JsonDocument {
  return {
    // It creates files, not changes to a deployment; a new sandbox is a change.
    changed: true,
    dir: info.dir,
    replaced: info.replaced,
    config_file: info.configFile,
    journal_dir: info.journalDir,
    scenario: { name: info.scenario.name, summary: info.scenario.summary, story: info.scenario.story },
    databases: Object.fromEntries(Object.entries(info.databases).map(([name, db]) => [name, { path: db.path, url: db.url }])),
    cells: info.cells.map((c) => ({ name: c.name, uuid: c.uuid, id: c.id, database: c.database.url })),
    next_commands: nextCommands(info, self),
  };
}
