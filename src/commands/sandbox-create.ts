// sandbox create DIR: a whole deployment in SQLite files plus a nova.conf,
// for trying the tool without a MySQL server or a cloud.
import { resolve } from 'node:path';
import { RECONCILE_EXIT, reconcileExitCodes } from '../cli/exit-codes.js';
import { flagOption, stringOption } from '../cli/options.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { createSandbox, requireScenario } from '../sandbox/create-sandbox.js';
import { renderSandboxReport, sandboxReportJson } from '../cli/render-sandbox.js';
import { SCENARIOS, type Scenario } from '../sandbox/scenarios.js';
import { ReconcileError } from '../errors.js';
import { jsonResult, report } from '../cli/results.js';

const DEFAULT_SCENARIO = 'libvirt';

interface SandboxCreateOptions {
  readonly scenario: Scenario;
  /** DIR as given (resolved against the working directory by run). */
  readonly dir: string;
  readonly force: boolean;
  readonly json: boolean;
}

export const sandboxCreateCommand: CommandSpec<SandboxCreateOptions> = {
  path: ['sandbox', 'create'],
  family: 'reconcile',
  summary: 'build a throw-away deployment (API, cell0, two cells, placement) in SQLite files, with a nova.conf',
  description: [
    'Creates DIR (it must not exist or be empty) with nova_api.sqlite, nova_cell0.sqlite, nova_cell1.sqlite, nova_cell2.sqlite and placement.sqlite, built with Nova-compatible schemas; maps cell0, cell1 and cell2 in the API database as nova-manage map_cell0 and create_cell would; fills the cells and placement with a scenario; and writes DIR/nova.conf pointing at all of it, with the journal in DIR/journal.',
    'Every other command can then run against it with --config-file DIR/nova.conf. No configuration file is read to create the sandbox, and nothing outside DIR is touched.',
    "The sandbox stays true however long it is kept: its nova.conf sets [nova_reconcile] sandbox_created_at, and the tool judges service liveness as of that moment instead of the clock (the sandbox's services heartbeated when it was built and never since), so live services stay live and dead ones stay dead. Scenarios that need a file ship it in DIR (deleted-ironic-node: ironic-nodes.json, for --ironic-nodes). The commands under 'Try next' are spelled as this tool was run, so they work when pasted.",
    `Scenarios (--scenario, default ${DEFAULT_SCENARIO}):`,
    ...SCENARIOS.map((s) => `${s.name}: ${s.summary}.`),
  ],
  args: ['<dir>'],
  options: [
    { flags: '--scenario <name>', description: `what to put in the sandbox: ${SCENARIOS.map((s) => s.name).join(', ')}`, suggestions: SCENARIOS.map((s) => s.name), defaultValue: DEFAULT_SCENARIO },
    { flags: '--force', description: 'replace a previous sandbox in DIR (refused if DIR holds anything else)' },
    FORMAT_OPTION,
  ],
  jsonSchemas: ['sandbox-create'],
  exitCodes: reconcileExitCodes({
    0: 'the sandbox was created',
    3: null,
    4: null,
    5: null,
    2: 'no SQLite driver: this Node.js has no built-in SQLite (it needs 22.16 or later) and better-sqlite3 is not installed beside nova-reconcile (`npm install -g better-sqlite3`) or cannot be loaded; DIR is not touched',
    127: 'unknown scenario; DIR is not empty (or holds a sandbox and --force was not given); DIR cannot be written',
    130: 'interrupted by Ctrl-C (SIGINT): DIR may hold part of a sandbox; run the same command again with --force to replace it',
    143: 'stopped by SIGTERM, as for 130',
  }),
  examples: [
    'nova-reconcile sandbox create /tmp/sbx --scenario ironic-ha',
    'nova-reconcile --config-file /tmp/sbx/nova.conf cell_v2 discover_hosts --verbose',
  ],
  parse(raw, args) {
    const scenario = requireScenario(stringOption(raw, 'scenario') ?? DEFAULT_SCENARIO);
    const dir = args[0];
    if (dir === undefined || dir === '') throw new ReconcileError('usage', 'sandbox create needs a directory', { hint: 'e.g. nova-reconcile sandbox create /tmp/sbx' });
    return { scenario, dir, force: flagOption(raw, 'force'), json: stringOption(raw, 'format') === 'json' };
  },
  async run(ctx, o) {
    const dir = resolve(ctx.cwd, o.dir);
    const info = await createSandbox(dir, o.scenario.name, {
      force: o.force,
      progress: (line) => ctx.reporter.warn(line),
    });
    if (o.json) return jsonResult(sandboxReportJson(info, ctx.selfCommand), RECONCILE_EXIT.clean);
    return report(renderSandboxReport(info, ctx.selfCommand), RECONCILE_EXIT.clean);
  },
};
