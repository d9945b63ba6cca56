#!/usr/bin/env node
// `npm run demo`: a guided tour on a throw-away sandbox, using the BUILT
// binary (npm run demo builds first). Each step says why it is run and what
// to look for, then shows the command line, its stdout and its exit code.
//
// To extend the tour, append to STEPS. A step is
//   { title, story: [paragraphs], args: [...], expectExit: 0, expectStdout: [substrings] }
// and runs as: nova-reconcile --config-file DIR/nova.conf <args>.
// The demo exits 1 if any step exits or prints other than expected.
// A step with `scenario: NAME` first builds a fresh sandbox with that
// scenario; it and the steps after it run against the new sandbox.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/nova-reconcile', import.meta.url));
const SCENARIO = 'ironic-ha';
const NODE = 'aa2f504a-fe68-4da3-b652-d23e2283273a';
// The ironic-failover scenario (src/sandbox/scenarios/ironic-failover.ts).
const FAILOVER_NODE = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123';
const FAILOVER_DUPLICATE = 'd6a3c1f0-8b7e-4e21-9c55-0a4f2b6e7d19';
const FAILOVER_SERVER = '5e0a7c3d-91b4-4f6a-8d2e-c7b1f0a93e58';

const STEPS = [
  {
    title: 'Discover hosts through their compute nodes (the default node path)',
    story: [
      'This is what most deployment tools run after adding compute hosts: nova-manage cell_v2 discover_hosts. It looks for compute nodes that are not mapped yet and maps their host to the cell that holds them.',
      `Notice that it maps only ironic-compute-0, the one host that has a compute node (ironic node ${NODE}). ironic-compute-1 and ironic-compute-2 are running and heartbeating, but they own no ironic node yet, so the node path never sees them: they stay unmapped. That is seed bug 1755602, and the reason --by-service exists.`,
    ],
    args: ['cell_v2', 'discover_hosts', '--verbose'],
    expectExit: 0,
    expectStdout: [
      `Creating host mapping for compute host 'ironic-compute-0': ${NODE}`,
      'Found 1 unmapped computes in cell: ',
    ],
  },
  {
    title: 'Discover hosts through their nova-compute services (--by-service)',
    story: [
      'The by-service path looks at the nova-compute services instead of the compute nodes, so every running compute service gets mapped, whether or not it owns a node yet.',
      'Notice that it maps ironic-compute-1 and ironic-compute-2, and leaves ironic-compute-0 alone: it was mapped by the previous step, and an existing mapping is never touched. When the hash ring later moves the ironic node to either of them, the scheduler can use it at once.',
    ],
    args: ['cell_v2', 'discover_hosts', '--by-service', '--verbose'],
    expectExit: 0,
    expectStdout: [
      'Creating host mapping for service ironic-compute-1',
      'Creating host mapping for service ironic-compute-2',
      'Found 2 unmapped computes in cell: ',
    ],
  },
  {
    title: 'List the host mappings',
    story: [
      'The same table nova-manage cell_v2 list_hosts prints, sorted by host name.',
      'Notice that all three ironic compute services are now mapped to cell1, exactly once each, and that cell2, which has no hosts, does not appear.',
    ],
    args: ['cell_v2', 'list_hosts'],
    expectExit: 0,
    expectStdout: ['ironic-compute-0', 'ironic-compute-1', 'ironic-compute-2'],
  },
  {
    scenario: 'ironic-failover',
    title: 'Audit a deployment after an ironic failover (seed bug 1714248)',
    story: [
      'A fresh sandbox: ironic-compute-0 died and was forced down; ironic-compute-1 took its ironic node over and created a second compute node for it, with a new uuid. Its provider could not be created, because the old provider still holds the node name (the 409), and the server on the node is still recorded on the dead host.',
      'The audit reads every database and lists each inconsistency with the command that fixes it. Notice the duplicate compute node, the provider-name conflict and the node of a forced-down service.',
    ],
    args: ['audit'],
    expectExit: 3,
    expectStdout: ['duplicate-compute-node', 'provider-name-conflict', 'node-of-dead-service'],
  },
  {
    title: 'Plan the ironic rebalance repair (dry run)',
    story: [
      "compute_node rebalance keeps the compute node whose provider holds the node's allocation (the old one), soft-deletes the duplicate, re-homes the old row onto ironic-compute-1, and moves the server with it. Placement needs no change here.",
      'Notice that nothing is changed: without --apply the plan is printed and the command exits 3.',
    ],
    args: ['compute_node', 'rebalance'],
    expectExit: 3,
    expectStdout: [
      `soft-delete compute node 2 (${FAILOVER_DUPLICATE}, host ironic-compute-1)`,
      `from host ironic-compute-0 to ironic-compute-1`,
      `with instance ${FAILOVER_SERVER}`,
      'Nothing was changed.',
    ],
  },
  {
    title: 'Apply the repair',
    story: [
      'With --apply each change is its own compare-and-swap transaction, journaled before it commits (the journal path is on stderr; `undo JOURNAL --apply` reverts it). Exit 4: changes applied.',
    ],
    args: ['compute_node', 'rebalance', '--apply'],
    expectExit: 4,
    expectStdout: ['applied 1 unit(s), skipped 0, refused 0.'],
  },
  {
    title: 'Audit again',
    story: ['Notice that the audit is clean now: one live compute node for the ironic node, on the live service, with its provider and the server, and nothing left for a re-run of the rebalance to do.'],
    args: ['audit'],
    expectExit: 0,
    expectStdout: [],
  },
  {
    title: 'Re-run the repair',
    story: ['A re-run after a successful apply finds nothing to do and exits 0, so it is safe in cron or a configuration-management run.'],
    args: ['compute_node', 'rebalance', '--apply'],
    expectExit: 0,
    expectStdout: ['compute_node rebalance: nothing to do.'],
  },
];

const WIDTH = 78;

function wrap(text, prefix = '') {
  const lines = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && prefix.length + line.length + 1 + word.length > WIDTH) {
      lines.push(prefix + line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(prefix + line);
  return lines.join('\n');
}

function shellQuote(word) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function commandLine(args) {
  return ['nova-reconcile', ...args].map(shellQuote).join(' ');
}

// OS_<GROUP>__<OPTION> variables override config files (as in oslo.config),
// so one left in the caller's environment would point the demo elsewhere.
function cleanEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) if (/^OS_[A-Za-z0-9_]+__/.test(key)) delete env[key];
  return env;
}

function run(args) {
  const result = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: cleanEnv() });
  if (result.error) throw result.error;
  return { code: result.status ?? 255, stdout: result.stdout, stderr: result.stderr };
}

function indent(text) {
  return text
    .split('\n')
    .map((l) => (l === '' ? '' : `    ${l}`))
    .join('\n');
}

function show(result) {
  const out = result.stdout.replace(/\n$/, '');
  if (out !== '') console.log(indent(out));
  else console.log('    (no output)');
  console.log(`  exit code: ${result.code}`);
}

function rule(title) {
  console.log(`\n${'='.repeat(WIDTH)}\n${title}\n${'='.repeat(WIDTH)}`);
}

function main() {
  const root = mkdtempSync(join(tmpdir(), 'nova-reconcile-demo-'));
  let dir = join(root, 'sandbox');
  let config = join(dir, 'nova.conf');
  const failures = [];

  rule(`Step 0. Build a sandbox deployment (scenario ${SCENARIO})`);
  console.log(
    wrap(
      'nova-reconcile can build a complete, throw-away deployment in SQLite files: the API database, cell0, two cells and placement, plus a nova.conf that points at them. Nothing here touches a real cloud.',
    ),
  );
  const createArgs = ['sandbox', 'create', dir, '--scenario', SCENARIO];
  console.log(`\n  $ ${commandLine(createArgs)}`);
  const created = run(createArgs);
  show(created);
  if (created.code !== 0) {
    process.stderr.write(created.stderr);
    console.error(`\ndemo: could not create the sandbox (exit ${created.code}); nothing else to show.`);
    return 1;
  }

  STEPS.forEach((step, i) => {
    rule(`Step ${i + 1}. ${step.title}`);
    if (step.scenario !== undefined) {
      dir = join(root, step.scenario);
      config = join(dir, 'nova.conf');
      const sandboxArgs = ['sandbox', 'create', dir, '--scenario', step.scenario];
      console.log(`  $ ${commandLine(sandboxArgs)}`);
      const made = run(sandboxArgs);
      console.log(`  exit code: ${made.code}\n`);
      if (made.code !== 0) failures.push(`step ${i + 1} (${commandLine(sandboxArgs)}): exit code ${made.code}`);
    }
    console.log(step.story.map((p) => wrap(p)).join('\n\n'));
    const args = ['--config-file', config, ...step.args];
    console.log(`\n  $ ${commandLine(args)}`);
    const result = run(args);
    show(result);
    if (result.stderr.trim() !== '') console.log(`  stderr:\n${indent(result.stderr.replace(/\n$/, ''))}`);
    const problems = [];
    if (result.code !== step.expectExit) problems.push(`exit code ${result.code}, expected ${step.expectExit}`);
    for (const text of step.expectStdout ?? []) if (!result.stdout.includes(text)) problems.push(`stdout lacks ${JSON.stringify(text)}`);
    if (problems.length > 0) {
      console.log(`  UNEXPECTED: ${problems.join('; ')}`);
      failures.push(`step ${i + 1} (${commandLine(step.args)}): ${problems.join('; ')}`);
    }
  });

  rule('Done');
  console.log(wrap(`The sandbox stays in ${dir} for you to explore, e.g.:`));
  // nova-reconcile is not on PATH in a checkout: print a line that works when pasted.
  console.log(`  node ${shellQuote(BIN)} ${['--config-file', config, 'cell_v2', 'list_cells'].map(shellQuote).join(' ')}`);
  console.log(wrap(`Remove it with: rm -rf ${shellQuote(root)}`));
  if (failures.length > 0) {
    console.error(`\ndemo: ${failures.length} step(s) did not behave as expected:`);
    for (const f of failures) console.error(`  - ${f}`);
    return 1;
  }
  return 0;
}

try {
  process.exitCode = main();
} catch (err) {
  console.error(`demo: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
