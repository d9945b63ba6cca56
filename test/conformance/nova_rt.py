# States written by Nova's own code, and Nova's own resource tracker run on
# them, for the conformance tier (test/conformance/release.ts). The same file
# runs under every release the tier covers: Zed 26.x on this machine's
# python3, and the newer Novas inside their Debian chroots.
#
# Real: the object layer (Service, ComputeNode, Instance, InstanceMapping
# create/save), the resource tracker and its update_available_resource
# periodic, the ironic virt driver, the report client and its scheduler
# claim, and Placement (its WSGI application in-process over its database,
# as nova-on-placement.ts does). Faked: only the Ironic API behind the
# driver's openstacksdk connection (the node list this file is given).
#
#   python3 nova_rt.py CONF '{"op": "seed-1714248", ...}'
#   python3 nova_rt.py CONF '{"op": "periodic", "host": "ironic-2", "times": 2, "nodes": [...]}'
#
# Prints one JSON document on stdout: {"ok": bool, "errors": [...],
# "warnings": [...], ...}.
import sys
import json

import nova.cmd  # noqa: F401  (eventlet monkey patching, as nova-manage does first)

conf_path = sys.argv[1]
request = json.loads(sys.argv[2])

import logging
from types import SimpleNamespace

from oslo_config import cfg

from nova import config, context as nova_context, objects
from nova import exception

config.parse_args([sys.argv[0]], default_config_files=[conf_path])
objects.register_all()
CONF = cfg.CONF


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records = []

    def emit(self, record):
        try:
            self.records.append({'level': record.levelname, 'logger': record.name, 'message': record.getMessage()})
        except Exception:  # noqa
            self.records.append({'level': record.levelname, 'logger': record.name, 'message': str(record.msg)})


capture = Capture()
logging.getLogger().addHandler(capture)
logging.getLogger().setLevel(logging.INFO)
info_lines = []


class InfoCapture(logging.Handler):
    def emit(self, record):
        if record.levelno == logging.INFO and record.name.startswith('nova.compute'):
            info_lines.append(record.getMessage())


logging.getLogger().addHandler(InfoCapture(level=logging.INFO))

# Placement, in-process (placement_in_process.py, prepended to this file by release.ts).
reportclient = in_process_report_client(conf_path)  # noqa: F821


# The Ironic API behind the driver: openstacksdk's node objects, as the
# driver reads them (id, instance_id, is_maintenance, ...).
def make_node(spec):
    n = SimpleNamespace()
    n.id = spec['uuid']
    n.uuid = spec['uuid']
    n.name = spec.get('name')
    n.instance_id = spec.get('instance_uuid')
    n.instance_uuid = spec.get('instance_uuid')
    n.is_maintenance = False
    n.maintenance = False
    n.provision_state = 'active' if spec.get('instance_uuid') else 'available'
    n.target_provision_state = None
    n.power_state = 'power on' if spec.get('instance_uuid') else 'power off'
    n.target_power_state = None
    n.properties = {'memory_mb': 262144, 'cpus': 32, 'local_gb': 900, 'cpu_arch': 'x86_64', 'capabilities': ''}
    n.resource_class = spec.get('resource_class', 'baremetal-gold')
    n.driver = 'ipmi'
    n.driver_info = {}
    n.instance_info = {}
    n.extra = {}
    n.traits = []
    n.conductor_group = spec.get('conductor_group', '')
    n.shard = spec.get('shard')
    n.fault = None
    n.last_error = None
    n.reservation = None
    n.owner = None
    n.lessee = None
    return n


class FakeIronic(object):
    def __init__(self, specs):
        self.specs = specs

    def nodes(self, **kwargs):
        out = []
        for s in self.specs:
            if kwargs.get('conductor_group') is not None and s.get('conductor_group', '') != kwargs['conductor_group']:
                continue
            out.append(make_node(s))
        return iter(out)

    def get_node(self, node_id, fields=None):
        for s in self.specs:
            if s['uuid'] == node_id or s.get('name') == node_id:
                return make_node(s)
        from openstack import exceptions as sdk_exc
        raise sdk_exc.ResourceNotFound('node %s not found' % node_id)


def ironic_driver(specs):
    from nova.virt.ironic import driver as ironic
    d = ironic.IronicDriver(None)
    d._ironic_connection = FakeIronic(specs)
    return d


ctx = nova_context.get_admin_context()


def service(host, forced_down=False):
    try:
        svc = objects.Service.get_by_compute_host(ctx, host)
    except exception.ComputeHostNotFound:
        svc = objects.Service(ctx, host=host, binary='nova-compute', topic='compute', report_count=1)
        svc.create()
    if forced_down and not svc.forced_down:
        svc.forced_down = True
        svc.save()
    return svc


def resource_tracker(host, specs, ring=None):
    from nova.compute import resource_tracker as rt_mod
    from nova.virt.ironic import driver as ironic
    CONF.set_override('host', host)
    drv = ironic_driver(specs)
    if ring is not None:
        # The members of this service's hash ring, as [ironic] peer_list names them: which of
        # several live services takes a node without an instance is not what these cases test.
        def refresh(ctxt):
            drv.hash_ring = ironic.hash_ring.HashRing(set(h.lower() for h in ring), partitions=ironic._HASH_RING_PARTITIONS)
        drv._refresh_hash_ring = refresh
    rt = rt_mod.ResourceTracker(host, drv, reportclient=reportclient)
    # nova-compute registers its service when it starts, before any periodic.
    svc = service(host)
    if hasattr(rt, 'set_service_ref'):
        # Nova 28.0.0+: ComputeManager.pre_start_hook does this before any periodic.
        rt.set_service_ref(svc)
    return rt, drv


def run_periodics(host, specs, times, ring=None):
    rt, drv = resource_tracker(host, specs, ring)
    errors = []
    seen = []
    for i in range(times):
        # As ComputeManager.update_available_resource does for each node the driver lists.
        nodenames = sorted(drv.get_available_nodes(refresh=True))
        seen.append(nodenames)
        for nodename in nodenames:
            try:
                rt.update_available_resource(ctx, nodename, startup=(i == 0))
            except Exception as e:  # noqa
                errors.append('%s: %s' % (type(e).__name__, e))
    return errors, seen


def compute_node(host, uuid, resources, service_id):
    """A compute_nodes row through the object layer, its values the driver's, as the tracker copies them."""
    cn = objects.ComputeNode(ctx)
    skip = ('id', 'host', 'service_id', 'uuid', 'numa_topology', 'supported_hv_specs', 'pci_device_pools', 'stats')
    for k, v in resources.items():
        if k in objects.ComputeNode.fields and k not in skip:
            try:
                setattr(cn, k, v)
            except Exception:  # noqa
                pass
    for k, default in (('cpu_info', ''), ('vcpus_used', 0), ('memory_mb_used', 0), ('local_gb_used', 0), ('hypervisor_version', 1)):
        if not cn.obj_attr_is_set(k) or getattr(cn, k) is None:
            setattr(cn, k, default)
    for k in ('cpu_allocation_ratio', 'ram_allocation_ratio', 'disk_allocation_ratio'):
        setattr(cn, k, 1.0)
    cn.host = host
    cn.uuid = uuid
    cn.service_id = service_id
    cn.create()
    return cn


def create_instance(inst, host, node, compute_id, project, user, cell_uuid):
    """The server on its node, as the compute manager saves it after the build (28.0.0+: with compute_id), and its mapping."""
    rc = 'CUSTOM_BAREMETAL_GOLD'
    cell = objects.CellMapping.get_by_uuid(ctx, cell_uuid)
    flavor = objects.Flavor(ctx, flavorid='bm', name='bm.gold', memory_mb=262144, vcpus=32, root_gb=900, ephemeral_gb=0, swap=0,
                            rxtx_factor=1.0, vcpu_weight=0, disabled=False, is_public=True,
                            extra_specs={'resources:%s' % rc: '1', 'resources:VCPU': '0', 'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0'})
    instance = objects.Instance(ctx, uuid=inst, project_id=project, user_id=user, host=host, node=node, launched_on=host,
                                vm_state='active', power_state=1, flavor=flavor, old_flavor=None, new_flavor=None,
                                instance_type_id=1, memory_mb=262144, vcpus=32, root_gb=900, ephemeral_gb=0,
                                image_ref='', system_metadata={}, metadata={}, availability_zone='nova')
    if 'compute_id' in objects.Instance.fields:
        instance.compute_id = compute_id
    instance.create()
    objects.InstanceMapping(ctx, instance_uuid=inst, cell_mapping=cell, project_id=project, user_id=user, queued_for_delete=False).create()
    return instance


def seed_1714248(r):
    """The seed-1714248 duplicate as a 2023.1+ cloud has it."""
    legacy, live = r['legacy_host'], r['live_host']
    node, legacy_uuid, inst = r['node'], r['legacy_uuid'], r['instance']
    project, user = r['project'], r['user']
    svc1 = service(legacy)
    service(live)
    specs = [{'uuid': node, 'instance_uuid': inst}]
    drv = ironic_driver(specs)
    CONF.set_override('host', legacy)
    resources = drv.get_available_resource(node)
    # The pre-Rocky row: Nova of that time gave it a random uuid.
    cn = compute_node(legacy, legacy_uuid, resources, svc1.id)
    # Its provider, named after the node, with the node's inventory, through the report client.
    rc = 'CUSTOM_BAREMETAL_GOLD'
    reportclient._ensure_resource_provider(ctx, legacy_uuid, name=node)
    reportclient.set_inventory_for_provider(ctx, legacy_uuid, {rc: {'total': 1, 'reserved': 0, 'min_unit': 1, 'max_unit': 1, 'step_size': 1, 'allocation_ratio': 1.0}})
    reportclient.set_traits_for_provider(ctx, legacy_uuid, ['COMPUTE_NODE'])
    # The server, booted on it: the scheduler's claim, then the instance and its mapping.
    claimed = reportclient.claim_resources(ctx, inst, {'allocations': {legacy_uuid: {'resources': {rc: 1}}}}, project, user, allocation_request_version='1.28', consumer_generation=None)
    if not claimed:
        raise RuntimeError('the scheduler claim failed')
    create_instance(inst, legacy, node, cn.id, project, user, r['cell_uuid'])
    # The live service took the node over: its tracker made the row of the node's uuid (27.0.0+),
    # and the provider create of that uuid hits the name (409). On Zed the tracker would adopt the
    # old row instead, so the row is created as 27.0.0+'s tracker creates it.
    CONF.set_override('host', live)
    live_resources = drv.get_available_resource(node)
    cn2 = compute_node(live, node, live_resources, objects.Service.get_by_compute_host(ctx, live).id)
    # The legacy service is gone for good: forced down.
    service(legacy, forced_down=True)
    return {'legacy_id': cn.id, 'live_id': cn2.id}


def hosts(r):
    """Services and compute nodes as nova-compute registers them: r['hosts'] = [{host, nodes: [{uuid, name, type}]}]."""
    made = []
    for h in r['hosts']:
        svc = service(h['host'])
        for n in h.get('nodes', []):
            resources = {'hypervisor_hostname': n['name'], 'hypervisor_type': n.get('type', 'QEMU'), 'hypervisor_version': 8002000,
                         'vcpus': 8, 'memory_mb': 16384, 'local_gb': 100, 'vcpus_used': 0, 'memory_mb_used': 512, 'local_gb_used': 0,
                         'cpu_info': '{}', 'disk_available_least': 100}
            made.append(compute_node(h['host'], n['uuid'], resources, svc.id).id)
    return {'node_ids': made}


def boot(r):
    """An ironic node taken by the tracker of r['host'] (row and provider), then a server booted on it (claim, instance, mapping)."""
    host, node = r['host'], r['node']
    service(host)
    errors, _ = run_periodics(host, [{'uuid': node}], 1, ring=[host])
    if errors:
        return {'errors': errors}
    inst = r.get('instance')
    if inst is None:
        return {'errors': []}
    cn = objects.ComputeNode.get_by_host_and_nodename(ctx, host, node)
    rc = 'CUSTOM_BAREMETAL_GOLD'
    claimed = reportclient.claim_resources(ctx, inst, {'allocations': {cn.uuid: {'resources': {rc: 1}}}}, r['project'], r['user'], allocation_request_version='1.28', consumer_generation=None)
    if not claimed:
        return {'errors': ['the scheduler claim failed']}
    create_instance(inst, host, node, cn.id, r['project'], r['user'], r['cell_uuid'])
    errors, _ = run_periodics(host, [{'uuid': node, 'instance_uuid': inst}], 1, ring=[host])
    return {'errors': errors, 'node_id': cn.id}


def legacy_provider(r):
    """A pre-Rocky row of the node (random uuid) and its provider named after the node, then the row deleted the way
    Nova deletes a compute node (ComputeNode.destroy) while its provider stays behind."""
    host, node, legacy_uuid = r['host'], r['node'], r['legacy_uuid']
    svc = service(host)
    CONF.set_override('host', host)
    resources = ironic_driver([{'uuid': node}]).get_available_resource(node)
    cn = compute_node(host, legacy_uuid, resources, svc.id)
    rc = 'CUSTOM_BAREMETAL_GOLD'
    reportclient._ensure_resource_provider(ctx, legacy_uuid, name=node)
    reportclient.set_inventory_for_provider(ctx, legacy_uuid, {rc: {'total': 1, 'reserved': 0, 'min_unit': 1, 'max_unit': 1, 'step_size': 1, 'allocation_ratio': 1.0}})
    reportclient.set_traits_for_provider(ctx, legacy_uuid, ['COMPUTE_NODE'])
    cn.destroy()
    return {'errors': []}


def main():
    op = request['op']
    out = {'op': op}
    try:
        if op == 'seed-1714248':
            out.update(seed_1714248(request))
            out['errors'] = []
        elif op == 'hosts':
            out.update(hosts(request))
            out['errors'] = []
        elif op == 'periodic':
            out['errors'], out['nodes'] = run_periodics(request['host'], request['nodes'], request.get('times', 2), request.get('ring'))
        elif op == 'boot':
            out.update(boot(request))
        elif op == 'destroy-node':
            objects.ComputeNode.get_by_uuid(ctx, request['uuid']).destroy()
            out['errors'] = []
        elif op == 'drop-allocation':
            reportclient.delete_allocation_for_instance(ctx, request['instance'], force=True)
            out['errors'] = []
        elif op == 'legacy-provider':
            out.update(legacy_provider(request))
        elif op == 'force-down':
            service(request['host'], forced_down=True)
            out['errors'] = []
        else:
            raise RuntimeError('unknown op %s' % op)
    except Exception as e:  # noqa
        import traceback
        out['errors'] = ['%s: %s' % (type(e).__name__, e), traceback.format_exc()]
    out['warnings'] = [r['message'] for r in capture.records]
    out['info'] = info_lines
    out['ok'] = len(out['errors']) == 0 and not any(r['level'] in ('ERROR', 'CRITICAL') for r in capture.records)
    sys.stdout.write(json.dumps(out) + '\n')


main()
