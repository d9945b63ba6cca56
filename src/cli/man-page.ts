// man/nova-reconcile.1 is generated from the command specs (scripts/gen-man.mjs)
// so that it always covers every command, option and exit code; a test fails
// when the committed page is out of date.
import { RECONCILE_EXIT_TABLE } from './exit-codes.js';
import { GLOBAL_OPTIONS, SUPPORTED_RELEASES, compatibleGrammar, scopeUsers } from './help.js';
import { SCOPE_INTRO, SCOPE_OPTIONS, optionName } from './scope.js';
import { jsonSchemaIndex, SCHEMA_VERSION } from './json-contract.js';
import type { CommandSpec } from './spec.js';

export function renderManPage(commands: readonly CommandSpec[], version: string): string {
  const out: string[] = [];
  out.push(`.TH NOVA-RECONCILE 1 "" "nova-reconcile ${version}" "OpenStack operator tools"`);
  out.push('.SH NAME', "nova-reconcile \\- keep Nova's API, cell and Placement databases consistent");
  out.push('.SH SYNOPSIS', '.B nova-reconcile', '[\\fB\\-\\-config\\-file\\fR \\fIFILE\\fR]... [\\fB\\-\\-config\\-dir\\fR \\fIDIR\\fR] \\fIcategory\\fR \\fIaction\\fR [\\fIoptions\\fR]');
  out.push(
    '.SH DESCRIPTION',
    "nova-reconcile works directly against Nova's API database, every cell database (found through",
    '.BR cell_mappings )',
    "and the Placement database. Its nova-manage compatible commands print what nova-manage prints and exit",
    'as it exits, so automation that parses them keeps working. Its reconciliation commands compute a plan first and',
    'change nothing without',
    '.BR \\-\\-apply .',
  );
  out.push('.SH SUPPORTED RELEASES', esc(SUPPORTED_RELEASES));
  out.push('.SH GLOBAL OPTIONS');
  for (const [flag, text] of GLOBAL_OPTIONS) out.push('.TP', `.B ${esc(flag)}`, esc(text));
  const scoped = SCOPE_OPTIONS.map((o) => [o, scopeUsers(commands, o)] as const).filter(([, users]) => users.length > 0);
  if (scoped.length > 0) {
    out.push('.SH SCOPE OPTIONS', 'The plan commands share these options: the same spelling and meaning wherever they are taken.', esc(SCOPE_INTRO));
    for (const [o, users] of scoped) out.push('.TP', `.B ${esc(o.flags)}`, esc(`${o.description}. Taken by: ${users.join(', ')}.`));
  }
  for (const [title, family] of [
    ['NOVA-MANAGE COMPATIBLE COMMANDS', 'compatible'],
    ['RECONCILIATION COMMANDS', 'reconcile'],
  ] as const) {
    const specs = commands.filter((c) => c.family === family);
    if (specs.length === 0) continue;
    out.push(`.SH ${title}`);
    for (const spec of specs) out.push(...renderCommand(spec));
  }
  out.push('.SH EXIT STATUS', 'The compatible commands keep nova-manage\'s codes, listed with each command above. The reconciliation commands share these:');
  for (const [code, text] of RECONCILE_EXIT_TABLE) out.push('.TP', `.B ${code}`, esc(text));
  out.push(...configurationSection(), ...runSections(), ...safetySections(), ...outputSections(commands));
  return out.join('\n') + '\n';
}

/** CONFIGURATION: the nova.conf options read, the ironic partitions and the Ironic API. */
function configurationSection(): string[] {
  return [
    '.SH CONFIGURATION',
    'nova.conf is read with oslo.config semantics: repeated \\-\\-config\\-file (the last file to set an option wins),',
    '\\-\\-config\\-dir (*.conf in sorted order, at its position), and the default search path ~/.nova/, ~/, /etc/nova/, /etc/',
    '(each also with a nova.conf.d/ directory). Section names are case-insensitive, keys case-sensitive.',
    'Environment variables OS_\\fIGROUP\\fR__\\fIOPTION\\fR override the files.',
    'Options read: [api_database] connection, [database] connection, [DEFAULT] transport_url, [placement_database] connection,',
    '[DEFAULT] service_down_time and report_interval, and the [nova_reconcile] section: journal_dir, lock_timeout (s),',
    'lock_database, cell_concurrency, apply_concurrency, apply_batch_units, connect_timeout (s), ironic_ring_members, ironic_partitions, max_apply_units, max_apply_fraction,',
    'min_ironic_fraction, and sandbox_created_at (written by sandbox create: service liveness is judged as of that naive UTC',
    'time instead of the clock, because a sandbox is a picture of a deployment taken at its creation; never set it on a real',
    'deployment). Logging: [DEFAULT] log_file, log_dir, use_syslog, syslog_log_facility and debug, as oslo.log reads them.',
    '.PP',
    '[nova_reconcile] ironic_partitions says which nova\\-compute hosts serve which Ironic conductor group:',
    '"cg\\-a: compute\\-a1, compute\\-a2; cg\\-b: compute\\-b1; *: compute\\-0" (partitions separated by ";", a group and its hosts',
    'by ":", hosts by "," or spaces; "*" for nova\\-computes without [ironic] conductor_group, which serve every group). The given',
    'nova.conf\'s own [ironic] conductor_group (or its old name partition_key) and peer_list are added. A node whose group no nova\\-compute serves is unmanaged',
    '(audit: ironic\\-node\\-unmanaged); rebalance builds one hash ring per partition from its live hosts.',
    '.PP',
    'The ironic node list comes from the Ironic API, reached as nova\\-compute reaches it from [ironic]: auth_type password,',
    'v3applicationcredential, or none with endpoint_override; auth_url, username, password, project_name, user_domain_name,',
    'project_domain_name, application_credential_id, application_credential_secret; region_name, valid_interfaces, cafile,',
    'insecure, timeout; api_max_retries and api_retry_interval. \\-\\-ironic\\-nodes FILE uses a file instead.',
    'A wrong or unsupported value in [ironic] or ironic_partitions stops only the commands that read them (audit, compute_node',
    'list, cleanup_orphans, rebalance, move and restore, placement cleanup_providers: exit 2, one line, before any change); the',
    'commands nova\\-manage also has, and undo, run as nova\\-manage does with the same file.',
  ];
}

/** LOGGING, PROGRESS AND SIGNALS. */
function runSections(): string[] {
  return [
    '.SH LOGGING',
    'With \\-\\-log\\-file, \\-\\-log\\-dir or \\-\\-use\\-syslog (or their [DEFAULT] options), every applied unit (INFO), refusal and',
    'skipped unit (WARNING), restored or refused undo change, and error (ERROR) is logged, one line each, in oslo.log\'s default',
    'format: \\fIdate time.ms pid LEVEL nova_reconcile.category.action [\\-] message\\fR. Passwords in URLs are masked.',
    'The compatible commands that write log each host mapping discover_hosts creates, delete_host\'s deletion or refusal,',
    'db ironic_compute_node_move, and the \\-\\-verbose lines of heal_allocations and placement audit \\-\\-delete. Syslog',
    'lines go to /dev/log through logger(1) from util-linux (Node cannot send unix datagrams); without it a warning says so.',
    'NOVA_RECONCILE_SYSLOG_SOCKET names another socket (containers, tests). With no logging option nothing is logged.',
    '.SH PROGRESS AND SIGNALS',
    'On a terminal, audit and every \\-\\-apply show one status line on stderr, redrawn in place at most ten times a second:',
    'the phase, done/total and the rate. When stderr is not a terminal nothing is shown but the final count of an apply, unless',
    '\\-\\-progress asks for plain lines (at most one every two seconds).',
    '.PP',
    'Ctrl-C (SIGINT) or SIGTERM during the \\-\\-apply of a plan command: no unit is started after it, the units in flight',
    'finish (a unit is never cut in the middle, nor a batch of up to [nova_reconcile] apply_batch_units units written together;',
    'a change that loses its compare-and-swap is skipped as always), the result is',
    'printed, and a summary on stderr gives the units applied, the journal and the undo command; the exit code is 130',
    '(SIGINT) or 143 (SIGTERM). A second signal stops at once: the database rolls back the transaction in flight and its',
    'journal entry stays uncommitted (undo and the next run handle it). placement heal_allocations and placement audit',
    '\\-\\-delete are interrupted the same way while they write: the instance or consumer in flight finishes, no other is',
    'written, and the summary gives the count, the journal and the undo command. Outside an apply, and in db',
    'ironic_compute_node_move (one transaction), a signal stops at once with 130 or 143.',
    'undo \\-\\-apply is interrupted like an apply: the changes in flight finish (a run of up to apply_batch_units changes of one',
    'database is one transaction), no other starts; the same undo again finishes it.',
  ];
}

/** MONITORING, CIRCUIT BREAKER, PLAN FILES, GALERA. */
function safetySections(): string[] {
  return [
    '.SH MONITORING',
    'audit \\-\\-format prometheus prints, and audit \\-\\-metrics\\-file PATH writes atomically (a temporary file in the same',
    'directory, renamed over PATH), the metrics for node_exporter\'s textfile collector: nova_reconcile_audit_findings{kind,cell,cell_uuid}',
    '(every kind for every cell, 0 included), nova_reconcile_audit_success, nova_reconcile_audit_duration_seconds and',
    'nova_reconcile_audit_last_run_timestamp_seconds. A failed audit writes success 0 and no findings.',
    '.SH CIRCUIT BREAKER',
    'For unattended runs (cron), an apply whose plan is implausibly large applies nothing, exits 3, and logs one line on stderr',
    'naming the limit, the units against the objects, and the override. The dry run prints the same warning. The limits are',
    '[nova_reconcile] max_apply_units (default 1000 units of the whole plan, before \\-\\-max\\-count; 0: no limit) and',
    'max_apply_fraction (default 0.5: the share of the live compute nodes of a cell, or of the resource providers, that the plan',
    'removes or moves; judged above 5 objects; 1: no limit), overridden per run by \\-\\-max\\-apply\\-units and',
    '\\-\\-max\\-apply\\-fraction, or bypassed after review with \\-\\-allow\\-large\\-plan.',
    'A healthy cloud\'s cleanup touches a few per cent; a wrong input (an empty or foreign node list, a restored cell database,',
    'a service_down_time typo) makes nearly everything look broken.',
    '.PP',
    'Implausible ground truth is an error (exit 2, one line), never a verdict: an \\-\\-ironic\\-nodes list that is empty or holds',
    'fewer than [nova_reconcile] min_ironic_fraction (default 0.5; 0: no check) of the live ironic compute nodes the cells know,',
    'and a cell whose services table is empty while it has compute nodes.',
    '.SH PLAN FILES',
    'A dry run with \\-\\-plan\\-out FILE writes its plan (versioned JSON, mode 0600, no secrets). \\-\\-plan\\-in FILE \\-\\-apply',
    'applies exactly its units: under the apply lock the command plans again, and a reviewed unit is applied only if that plan',
    'still has it with the same expected values; any other is skipped with what changed. Units the review did not have are never',
    'added. A plan of another command, another deployment or other options is refused (exit 127).',
    '.SH GALERA',
    'When the server reports wsrep_on=ON, \\-\\-apply takes a lease row in the table nova_reconcile_locks (created on first use',
    'in the API database, or in [nova_reconcile] lock_database) instead of GET_LOCK, which Galera does not replicate:',
    'a 20 s lease, renewed every 4 s, expired by the database clock; a dead holder\'s lease is taken over at most 20 s later.',
    'Sessions read with wsrep_sync_wait=1; certification failures (1213) are retried like deadlocks (6 attempts, each marked',
    'rolled back in the journal; a change that loses them all skips its unit, exit 5); a node that is not',
    'ready (1047, outside the primary component) is refused with exit 2. Journals are bound to the API database name and',
    'the cell mappings, not to the address, so they can be undone through any node.',
  ];
}

/** OUTPUT, JSON OUTPUT, SECURITY, SEE ALSO. */
function outputSections(commands: readonly CommandSpec[]): string[] {
  return [
    '.SH OUTPUT',
    'The reconciliation tables are plain ASCII. Piped, each row is one line and every cell is whole. On a terminal a table wider',
    'than the terminal wraps its long cells at spaces: an identifier is never cut and a suggested command stays on one line; when',
    'even the longest words do not fit, each row is printed as a block of field: value lines. \\fB\\-\\-max\\-width\\fR \\fIN\\fR fits',
    'N columns, also piped (0: never fit), and \\fB\\-\\-fit\\-width\\fR the terminal\'s width (else $COLUMNS, else 80), as in',
    'python\\-openstackclient; CLIFF_MAX_TERM_WIDTH and CLIFF_FIT_WIDTH=1 set the same. Help wraps to the terminal, 80 columns piped.',
    'compute_node list, audit and the plan commands\' dry runs take \\fB\\-f\\fR \\fItable\\fR|\\fIjson\\fR|\\fIvalue\\fR|\\fIcsv\\fR',
    '(\\fB\\-f\\fR is \\fB\\-\\-format\\fR) and \\fB\\-c\\fR \\fICOLUMN\\fR (repeatable), as python\\-openstackclient does.',
    '.PP',
    'Colour (finding kinds by severity, plan verbs) only on a terminal: never when piped, never in JSON, value or csv.',
    'NO_COLOR turns it off, FORCE_COLOR on (0: off), TERM=dumb off.',
    '.SH JSON OUTPUT',
    `With \\fB\\-\\-format json\\fR every command prints one JSON object on stdout, with schema_version (${SCHEMA_VERSION}; it changes when a key`,
    'is removed, renamed or changes type), changed (whether the run changed anything; in an error document false, unless an apply had committed changes before it failed), and on a dry',
    'run would_change (whether the real run would change something now: what Ansible\'s check mode should read). Keys are',
    'snake_case. A command that fails prints {"schema_version", "changed": false, "error": {"kind", "message", "hint", "exit_code"}}',
    'instead. The JSON Schemas of the documents are in the package (schemas/ beside man/):',
    ...jsonSchemaIndex(commands).flatMap(([command, file]) => ['.TP', `.B ${esc(file)}`, esc(command)]),
    '.SH SECURITY',
    'No password is printed in any output, log, error or journal, except by',
    '.BR "cell_v2 list_cells \\-\\-verbose" ,',
    'which prints URLs as nova-manage does.',
    '.SH SEE ALSO',
    '.BR nova-manage (1)',
  ];
}

function renderCommand(spec: CommandSpec): string[] {
  const out: string[] = [];
  const args = (spec.args ?? []).map((a) => ` \\fI${esc(a)}\\fR`).join('');
  const opts = spec.options.map((o) => ` [\\fB${esc(o.flags.split(' ')[0] ?? o.flags)}\\fR${o.flags.includes(' ') ? ` \\fI${esc(o.flags.split(' ').slice(1).join(' '))}\\fR` : ''}]`).join('');
  out.push('.SS', `${esc(spec.path.join(' '))}`);
  out.push('.B nova-reconcile', `${esc(spec.path.join(' '))}${args}${opts}`, '.PP', esc(spec.summary));
  for (const p of spec.description) out.push('.PP', esc(p));
  const own = spec.options.filter((o) => o.scope !== true);
  const scope = spec.options.filter((o) => o.scope === true);
  if (own.length > 0) {
    out.push('.PP', 'Options:', '.RS');
    for (const o of own) out.push('.TP', `.B ${esc(o.short === undefined ? o.flags : `${o.short}, ${o.flags}`)}`, esc(o.description + (o.required === true ? ' (required)' : '')));
    out.push('.RE');
  }
  if (scope.length > 0) out.push('.PP', esc(`Scope options: ${scope.map(optionName).join(', ')} (see SCOPE OPTIONS).`));
  out.push('.PP', 'Exit codes:', '.RS');
  for (const [code, text] of spec.exitCodes) out.push('.TP', `.B ${code}`, esc(text));
  out.push('.RE');
  if (spec.family === 'compatible') out.push('.PP', esc(compatibleGrammar(spec)));
  if (spec.differences !== undefined && spec.differences.length > 0) {
    out.push('.PP', 'Deliberate differences from nova-manage:', '.RS');
    for (const d of spec.differences) out.push('.IP \\(bu 2', esc(d));
    out.push('.RE');
  }
  if (spec.examples !== undefined && spec.examples.length > 0) {
    out.push('.PP', 'Examples:', '.RS', '.nf');
    for (const e of spec.examples) out.push(esc(e));
    out.push('.fi', '.RE');
  }
  return out;
}

/** Escape roff: backslashes, leading dots and apostrophes, and dashes. */
function esc(text: string): string {
  const s = text.replace(/\\/g, '\\e').replace(/-/g, '\\-');
  return /^[.']/.test(s) ? `\\&${s}` : s;
}
