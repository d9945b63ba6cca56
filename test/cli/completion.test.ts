// `completion bash|zsh` through the built binary: the scripts are sourced in a
// real bash (and zsh) and their completion function is called as the shell
// calls it, with COMP_WORDS/COMP_CWORD (zsh: words/CURRENT) set; what it
// offers is compared with the command specs, so a new command or option that
// does not complete fails here.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { COMMANDS } from '../../src/dispatch/registry.js';
import { SCENARIOS } from '../../src/sandbox/scenarios.js';

let dir: string;
let bashScript: string;
let zshScript: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nova-reconcile-completion-'));
  const bash = await runBin(['completion', 'bash']);
  expect(bash).toMatchObject({ code: 0, stderr: '' });
  bashScript = join(dir, 'nova-reconcile.bash');
  writeFileSync(bashScript, bash.stdout);
  const zsh = await runBin(['completion', 'zsh']);
  expect(zsh).toMatchObject({ code: 0, stderr: '' });
  zshScript = join(dir, '_nova-reconcile');
  writeFileSync(zshScript, zsh.stdout);
  // Files and directories to complete.
  mkdirSync(join(dir, 'files', 'sbx-dir'), { recursive: true });
  writeFileSync(join(dir, 'files', 'journal-1.jsonl'), '');
  writeFileSync(join(dir, 'files', 'nova.conf'), '');
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** What bash's completion offers for the words typed so far (the last one being completed). */
function bashComplete(...words: string[]): string[] {
  const script = [
    'set -u',
    `source ${JSON.stringify(bashScript)}`,
    // As bash would: the function registered for the command is called.
    'spec=$(complete -p nova-reconcile)',
    '[[ $spec == *"-F _nova_reconcile"* ]] || { echo "not registered: $spec" >&2; exit 9; }',
    'COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}',
    '_nova_reconcile nova-reconcile "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', script, 'bash', 'nova-reconcile', ...words], {
    cwd: join(dir, 'files'),
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`bash exited ${r.status}: ${r.stderr}`);
  expect(r.stderr).toBe('');
  return r.stdout.split('\n').filter((l) => l !== '');
}

const categories = [...new Set(COMMANDS.map((c) => c.path[0]))];

describe('bash completion', () => {
  it('offers every category and single-word command, and help, after the program name', () => {
    expect(bashComplete('').sort()).toEqual([...categories, 'help'].sort());
    expect(bashComplete('cell')).toEqual(['cell_v2']);
  });

  it("offers a category's actions, also after global options and their values", () => {
    const actions = COMMANDS.filter((c) => c.path[0] === 'compute_node').map((c) => c.path[1]);
    expect(bashComplete('compute_node', '').sort()).toEqual([...actions].sort());
    expect(bashComplete('--config-file', 'nova.conf', '--debug', 'cell_v2', 'disc')).toEqual(['discover_hosts']);
    expect(bashComplete('help', 'cell_v2', 'list_')).toEqual(['list_hosts', 'list_cells']);
  });

  it("offers every option of each command (from its spec) and the global options", () => {
    for (const spec of COMMANDS) {
      const offered = bashComplete(...spec.path, '--');
      for (const o of spec.options) expect(offered).toContain(o.flags.split(' ')[0]);
      for (const g of ['--config-file', '--config-dir', '--debug', '--stats', '--help']) expect(offered).toContain(g);
    }
    expect(bashComplete('compute_node', 'rebalance', '--inc')).toEqual(['--include-down']);
  });

  it('completes option values: choices, suggestions, files and directories', () => {
    expect(bashComplete('cell_v2', 'list_cells', '--format', '')).toEqual(['table', 'json']);
    expect(bashComplete('audit', '--format', '=', 'j')).toEqual(['json']);
    expect(bashComplete('sandbox', 'create', 'x', '--scenario', 'ironic-f')).toEqual(SCENARIOS.map((s) => s.name).filter((n) => n.startsWith('ironic-f')));
    expect(bashComplete('--config-file', 'nov')).toEqual(['nova.conf']);
    expect(bashComplete('--config-dir', '')).toEqual(['sbx-dir']);
    expect(bashComplete('undo', 'journ')).toEqual(['journal-1.jsonl']);
    expect(bashComplete('sandbox', 'create', '')).toEqual(['sbx-dir']);
    expect(bashComplete('completion', '')).toEqual(['bash', 'zsh']);
    // A free value (a host name) gets nothing rather than the option list.
    expect(bashComplete('compute_node', 'move', '--to-host', '')).toEqual([]);
  });
});

/**
 * zsh's completion builtins (_describe, compadd, _files) exist only inside
 * its completion system; they are replaced by functions that print what they
 * were given, and the script's own function runs in a real zsh.
 */
function zshComplete(...words: string[]): string {
  const script = [
    'compdef() { print -r -- "compdef $*" >&2 }',
    '_describe() { local n=${@[-1]}; local -a arr; arr=("${(@P)n}"); print -r -- "describe ${(j:|:)${(@)arr%%:*}}" }',
    'compadd() { shift; print -r -- "compadd ${(j:|:)${(@P)1}}" }',
    '_files() { print -r -- "files $*" }',
    'compset() { : }',
    `source ${JSON.stringify(zshScript)} 2>/dev/null`,
    'words=(nova-reconcile "$@"); CURRENT=${#words}',
    '_nova_reconcile',
  ].join('\n');
  const r = spawnSync('zsh', ['-f', '-c', script, 'zsh', ...words], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`zsh exited ${r.status}: ${r.stderr}`);
  return r.stdout.trim();
}

const hasZsh = spawnSync('zsh', ['-f', '-c', 'exit 0']).status === 0;
if (!hasZsh && process.env['CI'] !== 'true') console.warn('\n*** zsh completion tests SKIPPED: zsh is not installed (.ci/run installs it) ***\n');

(hasZsh || process.env['CI'] === 'true' ? describe : describe.skip)('zsh completion', () => {
  it('registers itself with compdef when sourced', () => {
    const r = spawnSync('zsh', ['-f', '-c', `compdef() { print -r -- "compdef $*" }; source ${JSON.stringify(zshScript)}`], { encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('compdef _nova_reconcile nova-reconcile');
  });

  it('offers commands, options and values from the specs', () => {
    expect(zshComplete('')).toBe(`describe ${[...categories, 'help'].join('|')}`);
    expect(zshComplete('--config-file', 'x', 'cell_v2', '')).toBe(
      `describe ${COMMANDS.filter((c) => c.path[0] === 'cell_v2').map((c) => c.path[1]).join('|')}`,
    );
    const undo = COMMANDS.find((c) => c.path.join(' ') === 'undo');
    expect(zshComplete('undo', '--')).toContain(`describe ${undo?.options.map((o) => o.flags.split(' ')[0]).join('|')}|--config-file`);
    expect(zshComplete('audit', '--format', '')).toBe('compadd table|json|value|csv|prometheus');
    expect(zshComplete('audit', '--format=j')).toBe('compadd table|json|value|csv|prometheus');
    // osc-style -f, the short spelling of --format (issue 18).
    expect(zshComplete('audit', '-f', '')).toBe('compadd table|json|value|csv|prometheus');
    expect(zshComplete('--config-dir', '')).toBe('files -/');
    expect(zshComplete('undo', '')).toBe('files');
    expect(zshComplete('completion', '')).toBe('compadd bash|zsh');
  });
});

describe('completion command', () => {
  it('refuses an unknown shell in one line, exit 127', async () => {
    const r = await runBin(['completion', 'fish']);
    expect(r.code).toBe(127);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('bash, zsh');
  });
});
