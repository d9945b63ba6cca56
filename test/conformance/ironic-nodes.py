"""Write nodes into a real Ironic's database through Ironic's own object layer
(ironic.objects.Node), as the conductor would, for the conformance tier
(test/conformance/real-ironic.ts). POST /v1/nodes would need a conductor.

usage: python3 ironic-nodes.py IRONIC_CONF < commands.json
commands: {"create": [{uuid, provision_state, maintenance, conductor_group,
instance_uuid}], "bulk": {"count": N, "prefix": "..."}, "delete": [uuid],
"update": [{uuid, field: value}]}
"""
import json
import sys

from ironic.common import context as ir_context
from ironic.common import service
from ironic import objects


def main():
    conf = sys.argv[1]
    service.prepare_command(['ironic-nodes', '--config-file', conf])
    objects.register_all()
    ctx = ir_context.get_admin_context()
    cmd = json.load(sys.stdin)
    for spec in cmd.get('create', []):
        node = objects.Node(ctx, driver='fake-hardware', **spec)
        node.create()
    bulk = cmd.get('bulk')
    if bulk:
        # Many nodes at once: one insert through Ironic's SQLAlchemy models, the
        # object layer's own defaults otherwise (one create per node is ~10 ms).
        from ironic.db.sqlalchemy import api as db_api
        from ironic.db.sqlalchemy import models
        from oslo_utils import timeutils
        now = timeutils.utcnow()
        rows = []
        for i in range(bulk['count']):
            rows.append({
                'uuid': '%s%012x' % (bulk['prefix'], i),
                'driver': 'fake-hardware',
                # The object version and timestamps the object layer would write.
                'version': objects.Node.VERSION,
                'created_at': now,
                'provision_state': 'available',
                'power_state': 'power off',
                'maintenance': False,
                'conductor_group': '',
                'properties': {}, 'driver_info': {}, 'instance_info': {}, 'driver_internal_info': {}, 'extra': {},
            })
        with db_api._session_for_write() as session:
            session.execute(models.Node.__table__.insert(), rows)
    for uuid in cmd.get('delete', []):
        objects.Node.get_by_uuid(ctx, uuid).destroy()
    for upd in cmd.get('update', []):
        node = objects.Node.get_by_uuid(ctx, upd.pop('uuid'))
        for key, value in upd.items():
            setattr(node, key, value)
        node.save()


if __name__ == '__main__':
    main()
