# @summary Map new compute hosts to their cell, as puppet-nova's
#   nova::cell_v2::discover_hosts does with nova-manage, but idempotent.
#
# puppet-nova runs `nova-manage cell_v2 discover_hosts` as a refreshonly exec:
# it runs on every refresh and always reports a change. Here the exec is
# guarded by nova-reconcile's dry run instead: `discover_hosts --dry-run
# --strict` exits 0 when a real run would map a host and 1 when there is
# nothing to map, so a run with nothing to map reports no change. Any other
# exit code of the dry run (255: a database unreachable, a nova.conf without
# [api_database]) lets the command itself run, so the error fails the Puppet
# run instead of passing for "nothing to do". An unreadable config file also
# exits 1 (as nova-manage does), hence the `-r` test before the dry run.
#
# @param config_file nova.conf with [api_database] connection.
# @param by_service Discover by nova-compute service (ironic hosts without a
#   compute node too, bug 1755602); puppet-nova cannot pass it.
# @param path Where nova-reconcile is (npm install -g puts it in /usr/bin).
#
# @example
#   class { 'nova_reconcile::discover_hosts':
#     config_file => '/etc/nova/nova.conf',
#   }
class nova_reconcile::discover_hosts (
  String $config_file  = '/etc/nova/nova.conf',
  Boolean $by_service  = true,
  Array[String] $path  = ['/usr/local/bin', '/usr/bin', '/bin'],
) {
  $discover = join([
    "nova-reconcile --config-file '${config_file}' cell_v2 discover_hosts",
    if $by_service { ' --by-service' } else { '' },
  ], '')

  exec { 'nova-cell_v2-discover_hosts':
    command   => $discover,
    onlyif    => "[ ! -r '${config_file}' ] || { ${discover} --dry-run --strict; [ \$? -ne 1 ]; }",
    provider  => shell,
    path      => $path,
    logoutput => on_failure,
  }
}
