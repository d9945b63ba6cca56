# puppet apply --modulepath contrib/puppet contrib/puppet/nova_reconcile/examples/init.pp
class { 'nova_reconcile::discover_hosts':
  config_file => '/etc/nova/nova.conf',
}
