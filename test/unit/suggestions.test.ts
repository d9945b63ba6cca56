// Suggested commands repeat the user's --config-file/--config-dir, in order and shell-quoted.
import { describe, expect, it } from 'vitest';
import { configArguments, withConfigArguments } from '../../src/cli/suggestions.js';
import type { ConfigSource } from '../../src/config/types.js';

const SOURCES: ConfigSource[] = [
  { kind: 'file', path: '/etc/nova/nova.conf' },
  { kind: 'dir', path: "/srv/o'brien conf.d" },
  { kind: 'file', path: 'placement.conf' },
];

describe('withConfigArguments', () => {
  it('keeps the order of the sources and quotes each path only when needed', () => {
    expect(configArguments(SOURCES)).toBe(`--config-file /etc/nova/nova.conf --config-dir '/srv/o'\\''brien conf.d' --config-file placement.conf`);
  });

  it('adds them to every nova-reconcile and nova-manage command line, and only there', () => {
    const one: ConfigSource[] = [{ kind: 'file', path: 'a b.conf' }];
    expect(withConfigArguments('nova-reconcile cell_v2 delete_host --cell_uuid C --host h && nova-reconcile cell_v2 discover_hosts', one)).toBe(
      "nova-reconcile --config-file 'a b.conf' cell_v2 delete_host --cell_uuid C --host h && nova-reconcile --config-file 'a b.conf' cell_v2 discover_hosts",
    );
    expect(withConfigArguments('run `nova-manage placement heal_allocations --instance X`', one)).toBe("run `nova-manage --config-file 'a b.conf' placement heal_allocations --instance X`");
    expect(withConfigArguments('openstack baremetal node list -f json > nodes.json && nova-reconcile audit --ironic-nodes nodes.json', one)).toBe(
      "openstack baremetal node list -f json > nodes.json && nova-reconcile --config-file 'a b.conf' audit --ironic-nodes nodes.json",
    );
    expect(withConfigArguments('x is not a nova-reconcile journal; run `nova-reconcile --help`', one)).toBe('x is not a nova-reconcile journal; run `nova-reconcile --help`');
  });

  it('changes nothing with the default search path', () => {
    expect(withConfigArguments('nova-reconcile compute_node rebalance', [])).toBe('nova-reconcile compute_node rebalance');
  });
});
