#!/usr/bin/python3
"""Generate test/fixtures/hashring-vectors.json from the real tooz HashRing.

Reproduces exactly what Nova 26.2.2's ironic driver does
(nova/virt/ironic/driver.py):

  _refresh_hash_ring:  services = {svc.host.lower() for up services}
                       services.add(CONF.host.lower())
                       HashRing(services, partitions=_HASH_RING_PARTITIONS)  # 2**5
  _refresh_cache:      CONF.host.lower() in
                       hash_ring.get_nodes(node.uuid.encode('utf-8'))

get_nodes() uses the default replicas=1, so it returns a one-element set: the
owner. For every case the same 200 node UUIDs (uuid5, deterministic) are looked
up, so consumers can also check how ownership moves when membership changes.

Run with Debian's interpreter (python3-tooz is installed for /usr/bin/python3):
  /usr/bin/python3 scripts/gen-tooz-vectors.py > test/fixtures/hashring-vectors.json
"""
import importlib.metadata
import json
import sys
import uuid

from tooz import hashring

PARTITIONS = 2 ** 5  # nova.virt.ironic.driver._HASH_RING_PARTITIONS
LOOKUPS = 200
NAMESPACE = uuid.UUID('6f1d3a52-4c0e-5b7e-9a57-2d0c6b3f0e11')

# Host names as they appear in services.host (mixed case on purpose); Nova
# lower-cases them before building the ring.
CASES = [
    ['Ironic-Compute-1'],
    ['ironic-compute-1', 'IRONIC-COMPUTE-2'],
    ['ic-a.example.org', 'IC-B.example.org', 'ic-C.Example.Org'],
    ['Compute-0', 'compute-1', 'COMPUTE-2', 'compute-3', 'Compute-4',
     'compute-5', 'cOmPuTe-6'],
    # Two services whose host names differ only by case collapse into one
    # ring member.
    ['Compute-A', 'compute-a', 'compute-b'],
    # Non-ASCII host names: members are hashed as UTF-8.
    ['Stra\u00dfe-\u03a9', 'node-\u00c9t\u00e9'],
]


def node_uuids():
    return [str(uuid.uuid5(NAMESPACE, 'nova-reconcile-hashring-%d' % i))
            for i in range(LOOKUPS)]


def main():
    tooz_version = importlib.metadata.version('tooz')
    uuids = node_uuids()
    cases = []
    for hosts in CASES:
        members = {h.lower() for h in hosts}
        ring = hashring.HashRing(members, partitions=PARTITIONS)
        lookups = []
        for u in uuids:
            owners = ring.get_nodes(u.encode('utf-8'))
            assert len(owners) == 1, owners
            lookups.append([u, next(iter(owners))])
        cases.append({
            'hosts': hosts,
            'members': sorted(members),
            'lookups': lookups,
        })
    doc = {
        'generator': 'scripts/gen-tooz-vectors.py with tooz %s '
                     '(tooz.hashring.HashRing(members, partitions=%d); '
                     'get_nodes(node_uuid.encode("utf-8")))'
                     % (tooz_version, PARTITIONS),
        'tooz': tooz_version,
        'partitions': PARTITIONS,
        'hash': 'md5',
        'note': 'members = sorted({host.lower() for host in hosts}); '
                'each lookup is [node_uuid, owning member]',
        'cases': cases,
    }
    sys.stdout.write(render(doc))


def render(doc):
    """JSON with one lookup per line (diff-friendly, still compact)."""
    def j(v):
        return json.dumps(v, ensure_ascii=False)

    out = ['{']
    for k in ('generator', 'tooz', 'partitions', 'hash', 'note'):
        out.append('  %s: %s,' % (j(k), j(doc[k])))
    out.append('  "cases": [')
    for ci, case in enumerate(doc['cases']):
        out.append('    {')
        out.append('      "hosts": %s,' % j(case['hosts']))
        out.append('      "members": %s,' % j(case['members']))
        out.append('      "lookups": [')
        n = len(case['lookups'])
        for li, pair in enumerate(case['lookups']):
            out.append('        %s%s' % (j(pair), ',' if li < n - 1 else ''))
        out.append('      ]')
        out.append('    }%s' % (',' if ci < len(doc['cases']) - 1 else ''))
    out.append('  ]')
    out.append('}')
    text = '\n'.join(out) + '\n'
    assert json.loads(text) == doc
    return text


if __name__ == '__main__':
    main()
