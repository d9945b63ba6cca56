#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: nova-reconcile contributors
# Apache License 2.0 (see LICENSE in the nova-reconcile repository)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r'''
---
module: nova_reconcile
short_description: Map compute hosts and repair Nova's databases with nova-reconcile
version_added: "0.1.0"
description:
  - Runs one nova-reconcile command with C(--format json) and returns its JSON document.
  - The commands keep nova-manage's words (C(cell_v2 discover_hosts), C(placement audit), ...),
    as deployment tools spell them in their playbooks.
  - C(changed) comes from the command itself, so a task needs no C(changed_when).
  - Check mode is native. It runs the dry run (C(--dry-run), or a plan command without C(--apply)),
    which writes nothing, and C(changed) is the dry run's C(would_change).
  - Exit codes map to C(failed) as nova-reconcile's docs/operations/commands.md documents them, so a task needs no C(failed_when).
    C(cell_v2 discover_hosts) fails on any code but 0. In check mode it makes one pass, without I(wait);
    an expected host that the run would map counts as mapped, and one that has not registered yet is a
    warning, not a failure (the real run waits for it).
    A plan command (C(compute_node cleanup_orphans), C(placement cleanup_providers), C(compute_node rebalance),
    C(compute_node move), C(compute_node restore), C(cell_v2 prune_host_mappings)) is ok on 0 (nothing to do)
    and changed on 4 (applied); 3 with C(--apply) (a circuit breaker tripped, or every unit was refused or
    skipped) fails with the tool's message, and so does 5 (partly applied, changed).
    In check mode a plan command is ok on 0 and 3, and fails when a circuit breaker would stop the real run.
    C(audit) and C(placement audit) without I(delete) are read-only; their 3 (findings) is ok, never changed.
    C(placement audit) with I(delete) is changed on 4. C(placement heal_allocations) is changed on 0,
    ok on 4 (nothing to do), and changed on 1 (I(max_count) reached, run it again), with a warning.
    Any other code fails, with the tool's one-line error as C(msg).
  - With C(--diff) the plan is shown, in check mode and in a real run.
requirements:
  - nova-reconcile on the managed host (C(npm install -g nova-reconcile-X.tgz)), and a nova.conf
options:
  command:
    description:
      - The command, category and action as in nova-manage.
    type: str
    required: true
    choices:
      - cell_v2 discover_hosts
      - cell_v2 list_hosts
      - cell_v2 list_cells
      - cell_v2 prune_host_mappings
      - audit
      - compute_node list
      - compute_node cleanup_orphans
      - compute_node rebalance
      - compute_node move
      - compute_node restore
      - placement audit
      - placement cleanup_providers
      - placement heal_allocations
  config_file:
    description:
      - nova.conf files (C(--config-file)), in order; the last to set an option wins.
      - Without it, nova-reconcile searches as nova-manage does (C(~/.nova/), C(~/), C(/etc/nova/), C(/etc/)).
    type: list
    elements: path
  config_dir:
    description: C(--config-dir), read after the I(config_file)s.
    type: path
  executable:
    description: The nova-reconcile program, by name on C(PATH) or by path.
    type: str
    default: nova-reconcile
  by_service:
    description: C(cell_v2 discover_hosts --by-service), discover by nova-compute service (ironic hosts without a compute node too).
    type: bool
    default: false
  cell_uuid:
    description: C(--cell_uuid) of C(cell_v2 discover_hosts), C(cell_v2 list_hosts) and C(cell_v2 prune_host_mappings).
    type: str
  strict:
    description: C(cell_v2 discover_hosts --strict), fail (exit 1) unless a new host mapping was created.
    type: bool
    default: false
  expect:
    description: C(cell_v2 discover_hosts --expect), hosts that must end up mapped; the task fails naming those that are not.
    type: list
    elements: str
  wait:
    description: C(cell_v2 discover_hosts --wait), seconds to keep discovering until every I(expect) host is mapped.
    type: int
  interval:
    description: C(cell_v2 discover_hosts --interval), seconds between passes while waiting.
    type: int
  cell:
    description: Scope, C(--cell), a cell uuid or name (C(placement heal_allocations) takes a cell uuid).
    type: str
  host:
    description: Scope, C(--host).
    type: str
  node:
    description: Scope, C(--node), compute node uuids or ironic node uuids (C(compute_node move) too).
    type: list
    elements: str
  resource_provider:
    description: C(--resource_provider) of C(placement audit) and C(placement cleanup_providers).
    type: str
  max_count:
    description: C(--max-count), act on at most this many units (instances for C(placement heal_allocations)).
    type: int
  ironic_nodes:
    description: C(--ironic-nodes), the JSON of C(openstack baremetal node list -f json).
    type: path
  include_down:
    description: C(compute_node rebalance --include-down).
    type: bool
    default: false
  from_host:
    description: C(compute_node move --from-host).
    type: list
    elements: str
  to_host:
    description: C(compute_node move --to-host).
    type: str
  uuid:
    description: C(compute_node restore --uuid).
    type: str
  instance:
    description: C(placement heal_allocations --instance).
    type: str
  delete:
    description:
      - C(placement audit --delete), delete the orphaned allocations found (journaled).
      - In check mode the audit runs without it, and C(changed) says whether there is something to delete.
    type: bool
    default: false
  all_resource_classes:
    description: C(placement audit --all-resource-classes), also ironic (C(CUSTOM_*)) allocations.
    type: bool
    default: false
  kind:
    description: C(audit --kind), only these finding kinds.
    type: list
    elements: str
  metrics_file:
    description: C(audit --metrics-file), also write the Prometheus metrics there.
    type: path
  max_apply_units:
    description: Circuit breaker, C(--max-apply-units); over it nothing is applied and the task fails.
    type: int
  max_apply_fraction:
    description: Circuit breaker, C(--max-apply-fraction).
    type: float
  allow_large_plan:
    description: C(--allow-large-plan), apply a plan over a circuit-breaker limit. Review the plan first (check mode and C(--diff)).
    type: bool
    default: false
  plan_in:
    description:
      - C(--plan-in), apply exactly this reviewed plan file.
      - In check mode it is not given (nova-reconcile takes it only with C(--apply)), so the dry run plans afresh.
    type: path
  journal:
    description: C(--journal), write the journal of applied changes here.
    type: path
notes:
  - Supports check mode (the dry run) and diff mode (the plan).
  - The same commands without the collection are raw C(command) tasks, shown in nova-reconcile's docs/operations/automation.md.
author:
  - nova-reconcile contributors
'''

EXAMPLES = r'''
- name: Map new compute hosts
  openstack_ops.nova_reconcile.nova_reconcile:
    command: cell_v2 discover_hosts
    by_service: true
    config_file: /etc/nova/nova.conf

- name: Map the new computes, waiting up to 10 minutes for them to register
  openstack_ops.nova_reconcile.nova_reconcile:
    command: cell_v2 discover_hosts
    by_service: true
    expect: "{{ groups['compute'] | map('extract', hostvars, 'ansible_facts') | map(attribute='hostname') | list }}"
    wait: 600
    interval: 10

- name: Clean up orphan compute nodes (under --check, the plan)
  openstack_ops.nova_reconcile.nova_reconcile:
    command: compute_node cleanup_orphans
    ironic_nodes: /var/lib/nova-reconcile/nodes.json
    max_apply_units: 200
  register: cleanup

- name: Report the audit's findings without failing on them
  openstack_ops.nova_reconcile.nova_reconcile:
    command: audit
  register: audit

- ansible.builtin.debug:
    msg: "{{ audit.document.counts }}"
'''

RETURN = r'''
document:
  description: The command's JSON document (schemas/ in the nova-reconcile repository), or its error document.
  returned: when the command printed one
  type: dict
  sample: {"schema_version": 1, "command": "cell_v2 discover_hosts", "changed": true, "created": [{"host": "compute-1", "cell_uuid": "4dde17f6-6b53-4318-915d-00c67a4771f4"}]}
changed:
  description: Whether the run changed something; in check mode whether a real run would.
  returned: always
  type: bool
rc:
  description: nova-reconcile's exit code.
  returned: always
  type: int
  sample: 4
cmd:
  description: The command line that was run.
  returned: always
  type: list
  elements: str
stdout:
  description: nova-reconcile's standard output (the JSON document).
  returned: always
  type: str
stderr:
  description: nova-reconcile's standard error (progress, warnings, the error's hint).
  returned: always
  type: str
diff:
  description: The plan, as text in C(prepared) (shown by C(--diff)).
  returned: always
  type: dict
  sample: {"prepared": "+ host mapping compute-1 -> cell 4dde17f6-6b53-4318-915d-00c67a4771f4\n"}
'''

import json

from ansible.module_utils.basic import AnsibleModule

# What kind of command each one is: how its dry run is asked for, and what its
# exit codes mean (docs/operations/commands.md, "Exit codes").
COMMANDS = {
    'cell_v2 discover_hosts': ('discover', ['by_service', 'cell_uuid', 'strict', 'expect', 'wait', 'interval']),
    'cell_v2 list_hosts': ('read', ['cell_uuid']),
    'cell_v2 list_cells': ('read', []),
    'cell_v2 prune_host_mappings': ('plan', ['cell_uuid', 'cell', 'host', 'max_count']),
    'audit': ('audit', ['cell', 'host', 'kind', 'ironic_nodes', 'metrics_file']),
    'compute_node list': ('read', ['cell', 'host', 'ironic_nodes']),
    'compute_node cleanup_orphans': ('plan', ['cell', 'host', 'node', 'max_count', 'ironic_nodes']),
    'compute_node rebalance': ('plan', ['cell', 'host', 'node', 'max_count', 'ironic_nodes', 'include_down']),
    'compute_node move': ('plan', ['node', 'from_host', 'to_host']),
    'compute_node restore': ('plan', ['uuid']),
    'placement audit': ('placement_audit', ['resource_provider', 'delete', 'all_resource_classes']),
    'placement cleanup_providers': ('plan', ['cell', 'resource_provider', 'max_count']),
    'placement heal_allocations': ('heal', ['cell', 'instance', 'max_count']),
}

PLAN_OPTIONS = ['max_apply_units', 'max_apply_fraction', 'allow_large_plan', 'plan_in', 'journal']
for _kind, _options in COMMANDS.values():
    if _kind == 'plan':
        _options.extend(PLAN_OPTIONS)
COMMANDS['placement audit'][1].append('journal')
COMMANDS['placement heal_allocations'][1].append('journal')

# Module option -> (flag, how it is passed).
FLAGS = {
    'by_service': ('--by-service', 'flag'),
    'cell_uuid': ('--cell_uuid', 'value'),
    'strict': ('--strict', 'flag'),
    'expect': ('--expect', 'joined'),
    'wait': ('--wait', 'value'),
    'interval': ('--interval', 'value'),
    'cell': ('--cell', 'value'),
    'host': ('--host', 'value'),
    'node': ('--node', 'repeated'),
    'resource_provider': ('--resource_provider', 'value'),
    'max_count': ('--max-count', 'value'),
    'ironic_nodes': ('--ironic-nodes', 'value'),
    'include_down': ('--include-down', 'flag'),
    'from_host': ('--from-host', 'repeated'),
    'to_host': ('--to-host', 'value'),
    'uuid': ('--uuid', 'value'),
    'instance': ('--instance', 'value'),
    'all_resource_classes': ('--all-resource-classes', 'flag'),
    'kind': ('--kind', 'joined'),
    'metrics_file': ('--metrics-file', 'value'),
    'max_apply_units': ('--max-apply-units', 'value'),
    'max_apply_fraction': ('--max-apply-fraction', 'value'),
    'allow_large_plan': ('--allow-large-plan', 'flag'),
    'plan_in': ('--plan-in', 'value'),
    'journal': ('--journal', 'value'),
}


def build_command(module, binary, kind, options):
    p = module.params
    args = [binary]
    for path in p['config_file'] or []:
        args += ['--config-file', path]
    if p['config_dir']:
        args += ['--config-dir', p['config_dir']]
    args += p['command'].split(' ')
    check = module.check_mode
    for name in options:
        value = p[name]
        if name == 'delete' or value is None or value is False or value == []:
            continue
        # A dry run maps nothing, so waiting for the expected hosts could only time out
        # (nova-reconcile refuses --dry-run with --wait): check mode makes one pass.
        if check and kind == 'discover' and name in ('wait', 'interval'):
            continue
        # --plan-in only goes with --apply: check mode plans afresh.
        if check and name == 'plan_in':
            continue
        flag, how = FLAGS[name]
        if how == 'flag':
            args.append(flag)
        elif how == 'joined':
            args += [flag, ','.join(value)]
        elif how == 'repeated':
            for item in value:
                args += [flag, item]
        else:
            args += [flag, str(value)]
    if kind in ('discover', 'heal') and check:
        args.append('--dry-run')
    elif kind == 'plan' and not check:
        args.append('--apply')
    elif kind == 'placement_audit' and p['delete'] and not check:
        args.append('--delete')
    args += ['--format', 'json']
    return args


def plan_text(kind, doc):
    """The plan (or what was done), one line per change, for --diff."""
    lines = []
    if kind == 'discover':
        for created in doc.get('created') or []:
            lines.append('+ host mapping %s -> cell %s' % (created.get('host'), created.get('cell_uuid')))
        for service in doc.get('unmapped_services') or []:
            lines.append('! still unmapped: %s' % json.dumps(service, sort_keys=True))
        for host in doc.get('missing') or []:
            lines.append('! expected, not mapped: %s' % host)
    elif kind == 'plan':
        for unit in doc.get('units') or []:
            lines.append('+ %s' % unit.get('title'))
            for change in unit.get('changes') or []:
                target = change.get('target') or {}
                lines.append('    %s: %s' % (target.get('db', '?'), change.get('description')))
        for refused in doc.get('refused') or []:
            lines.append('! refused %s: %s' % (refused.get('subject'), refused.get('reason')))
        for breaker in doc.get('breaker') or []:
            lines.append('! circuit breaker: %s' % breaker.get('message'))
    elif kind == 'placement_audit':
        for orphan in doc.get('orphans') or []:
            lines.append('- allocations of consumer %s on provider %s: %s (%s)' % (
                orphan.get('consumer_uuid'), orphan.get('resource_provider_uuid'),
                json.dumps(orphan.get('resources'), sort_keys=True), orphan.get('status')))
    elif kind == 'heal':
        for instance in doc.get('instances') or []:
            lines.append('+ %s allocations of instance %s (%s)' % (instance.get('action'), instance.get('instance_uuid'), instance.get('status')))
    return ''.join(line + '\n' for line in lines)


def error_message(doc, stderr, rc):
    error = doc.get('error') if isinstance(doc, dict) else None
    if isinstance(error, dict) and error.get('message'):
        message = error['message']
        if error.get('hint'):
            message += ' (%s)' % error['hint']
        return message
    if isinstance(error, str) and error:
        return error
    lines = [line for line in stderr.splitlines() if line.strip()]
    return lines[-1] if lines else 'nova-reconcile exited %d' % rc


def judge(module, kind, rc, doc, stderr):
    """(changed, failed, msg, warnings) from the exit code and the document, as docs/operations/commands.md documents them."""
    check = module.check_mode
    would = bool(doc.get('would_change')) if check else bool(doc.get('changed'))
    if kind == 'discover':
        if rc == 0:
            return would, False, None, []
        if check and rc == 1 and 'missing' in doc and not doc.get('error'):
            # The dry run counts a host it would map as missing; the real run maps it.
            created = set(c.get('host') for c in doc.get('created') or [])
            if module.params['strict'] and not created:
                return False, True, '--strict: no new host would be mapped', []
            pending = [h for h in doc['missing'] if h not in created]
            if pending:
                return would, False, None, ['expected hosts not registered yet (a real run waits for them): ' + ', '.join(pending)]
            return would, False, None, []
        return False, True, error_message(doc, stderr, rc), []
    if kind == 'read':
        if rc == 0:
            return False, False, None, []
        return False, True, error_message(doc, stderr, rc), []
    if kind == 'audit':
        if rc in (0, 3):
            return False, False, None, []
        return False, True, error_message(doc, stderr, rc), []
    if kind == 'placement_audit':
        if not module.params['delete']:
            if rc in (0, 3):
                return False, False, None, []
            return False, True, error_message(doc, stderr, rc), []
        if check:
            if rc in (0, 3):
                return rc == 3, False, None, []
            return False, True, error_message(doc, stderr, rc), []
        if rc in (0, 4):
            return rc == 4, False, None, []
        return rc == 1, True, error_message(doc, stderr, rc), []
    if kind == 'heal':
        if check:
            if rc == 4:
                return would, False, None, []
            return False, True, error_message(doc, stderr, rc), []
        if rc in (0, 4):
            return rc == 0, False, None, []
        if rc == 1:
            return True, False, None, ['--max-count was reached and there are more instances to process: run the task again']
        return False, True, error_message(doc, stderr, rc), []
    # A plan command.
    breakers = doc.get('breaker') or []
    breaker_msg = '; '.join('circuit breaker tripped: %s; nothing was applied (override: %s)' % (b.get('message'), b.get('override')) for b in breakers)
    refused = ['%s: %s' % (r.get('subject'), r.get('reason')) for r in doc.get('refused') or []]
    if check:
        if rc in (0, 3):
            if breakers:
                return False, True, breaker_msg, []
            return would, False, None, ['refused ' + r for r in refused]
        return False, True, error_message(doc, stderr, rc), []
    if rc == 0:
        return False, False, None, ['refused ' + r for r in refused]
    if rc == 4:
        return True, False, None, ['refused ' + r for r in refused]
    if rc == 3:
        if breakers:
            return False, True, breaker_msg, []
        skipped = ['%s: %s' % (s.get('id'), s.get('reason')) for s in doc.get('skipped') or []]
        return False, True, 'nothing was applied: ' + '; '.join(refused + skipped), []
    if rc == 5:
        skipped = ['%s: %s' % (s.get('id'), s.get('reason')) for s in doc.get('skipped') or []]
        return True, True, 'partly applied; not applied: ' + '; '.join(refused + skipped), []
    return False, True, error_message(doc, stderr, rc), []


# The options, as DOCUMENTATION describes them (the clients tier compares the two).
ARGUMENT_SPEC = dict(
    command=dict(type='str', required=True, choices=sorted(COMMANDS)),
    config_file=dict(type='list', elements='path'),
    config_dir=dict(type='path'),
    executable=dict(type='str', default='nova-reconcile'),
    by_service=dict(type='bool', default=False),
    cell_uuid=dict(type='str'),
    strict=dict(type='bool', default=False),
    expect=dict(type='list', elements='str'),
    wait=dict(type='int'),
    interval=dict(type='int'),
    cell=dict(type='str'),
    host=dict(type='str'),
    node=dict(type='list', elements='str'),
    resource_provider=dict(type='str'),
    max_count=dict(type='int'),
    ironic_nodes=dict(type='path'),
    include_down=dict(type='bool', default=False),
    from_host=dict(type='list', elements='str'),
    to_host=dict(type='str'),
    uuid=dict(type='str'),
    instance=dict(type='str'),
    delete=dict(type='bool', default=False),
    all_resource_classes=dict(type='bool', default=False),
    kind=dict(type='list', elements='str'),
    metrics_file=dict(type='path'),
    max_apply_units=dict(type='int'),
    max_apply_fraction=dict(type='float'),
    allow_large_plan=dict(type='bool', default=False),
    plan_in=dict(type='path'),
    journal=dict(type='path'),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    p = module.params
    kind, options = COMMANDS[p['command']]

    common = ('command', 'config_file', 'config_dir', 'executable')
    misplaced = sorted(
        name for name, spec in ARGUMENT_SPEC.items()
        if name not in common and name not in options and p[name] not in (None, spec.get('default'))
    )
    if misplaced:
        module.fail_json(msg='%s does not take: %s' % (p['command'], ', '.join(misplaced)))

    binary = module.get_bin_path(p['executable'], required=True) if '/' not in p['executable'] else p['executable']
    args = build_command(module, binary, kind, options)
    rc, stdout, stderr = module.run_command(args, check_rc=False)

    result = dict(cmd=args, rc=rc, stdout=stdout, stderr=stderr, changed=False)
    try:
        doc = json.loads(stdout)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        lines = [line for line in stderr.splitlines() if line.strip()]
        module.fail_json(msg='nova-reconcile exited %d without a JSON document%s' % (rc, ': ' + lines[-1] if lines else ''), **result)

    changed, failed, msg, warnings = judge(module, kind, rc, doc, stderr)
    result.update(document=doc, changed=changed, diff=dict(prepared=plan_text(kind, doc)))
    for warning in warnings:
        module.warn(warning)
    if failed:
        module.fail_json(msg=msg, **result)
    # Ansible takes a non-zero rc for a failure unless the result says otherwise.
    module.exit_json(failed=False, **result)


if __name__ == '__main__':
    main()
