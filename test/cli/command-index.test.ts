// `help`, `<category> --help` and the dispatcher's errors come from the
// command index that scripts/bundle.mjs writes into the bundle
// (src/dispatch/command-index.ts), so that they do not load the commands
// (issue 20: process start). The index must be the registry's, and the
// commands must stay out of such runs; a command still loads them.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { renderTopLevelHelp } from '../../src/cli/help.js';
import { commandIndex } from '../../src/dispatch/command-index.js';
import { COMMANDS } from '../../src/dispatch/registry.js';

const BUNDLE = fileURLToPath(new URL('../../dist/src/bundle/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'nova-reconcile-index-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// An ES module loader hook that records every module URL the run loads.
const HOOKS = join(dir, 'hooks.mjs');
writeFileSync(
  HOOKS,
  "import { appendFileSync } from 'node:fs';\n" +
    'export async function load(url, context, next) {\n' +
    "  if (process.env.RECORD_MODULES_TO) appendFileSync(process.env.RECORD_MODULES_TO, url + '\\n');\n" +
    '  return next(url, context);\n' +
    '}\n',
);
const REGISTER = join(dir, 'register.mjs');
writeFileSync(REGISTER, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(HOOKS).href)});\n`);

/** The bundle's chunk that holds the commands' implementations (found by a function only they define). */
function commandsChunk(): string {
  const chunks = readdirSync(BUNDLE).filter((f) => f.endsWith('.mjs') && readFileSync(join(BUNDLE, f), 'utf8').includes('function planOrphanCleanup('));
  expect(chunks).toHaveLength(1);
  return pathToFileURL(join(BUNDLE, chunks[0] ?? '')).href;
}

async function loaded(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string; modules: string[] }> {
  const out = join(dir, `modules-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(out, '');
  const r = await runBin(args, { env: { NODE_OPTIONS: `--import ${REGISTER}`, RECORD_MODULES_TO: out } });
  return { code: r.code, stdout: r.stdout, stderr: r.stderr, modules: readFileSync(out, 'utf8').split('\n').filter((l) => l !== '') };
}

describe('the command index', () => {
  it("is the registry's: help from the bundle is the help the specs render", async () => {
    const r = await runBin(['help']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(renderTopLevelHelp(commandIndex(COMMANDS)));
    const group = await runBin(['compute_node', '--help']);
    expect(group.stdout).toBe(renderTopLevelHelp(commandIndex(COMMANDS).filter((c) => c.path[0] === 'compute_node')));
  });

  it('lists every command with the shared scope options it takes (the same OptionSpec objects)', () => {
    const index = commandIndex(COMMANDS);
    expect(index.map((c) => c.path.join(' '))).toEqual(COMMANDS.map((c) => c.path.join(' ')));
    expect(index.find((c) => c.path.join(' ') === 'compute_node cleanup_orphans')?.scope).toEqual(['--cell <cell>', '--host <host>', '--node <node>', '--max-count <n>']);
    expect(index.find((c) => c.path.join(' ') === 'cell_v2 list_cells')?.scope).toEqual([]);
  });

  it('help, a category without its action and an unknown command do not load the commands; a command does', async () => {
    const chunk = commandsChunk();
    const help = await loaded(['help']);
    expect(help.code).toBe(0);
    expect(help.modules.some((m) => m.includes('/dist/src/bundle/'))).toBe(true);
    expect(help.modules).not.toContain(chunk);
    const group = await loaded(['compute_node']);
    expect(group).toMatchObject({ code: 127, stdout: '' });
    expect(group.stderr).toContain('"compute_node" needs an action');
    expect(group.modules).not.toContain(chunk);
    const unknown = await loaded(['no_such', 'command']);
    expect(unknown.stderr).toContain('unknown command "no_such command"');
    expect(unknown.modules).not.toContain(chunk);
    const command = await loaded(['compute_node', 'cleanup_orphans', '--help']);
    expect(command.code).toBe(0);
    expect(command.modules).toContain(chunk);
  });
});
