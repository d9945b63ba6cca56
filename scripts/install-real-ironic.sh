#!/bin/sh
# Install the real Ironic 21.4 and Keystone 22 (Zed; Debian 12's
# python3-ironic, python3-keystone) that the conformance tier runs as
# ironic-api and keystone over their own scratch MariaDB databases
# (test/conformance/real-ironic.ts, real-keystone.ts). Idempotent and quiet:
# does nothing when the modules already import. The packages have the code
# but no console scripts; the tier calls ironic.cmd.api.main(),
# ironic.cmd.dbsync.main(), keystone.cmd.manage.main() and serves
# keystone.server.wsgi with wsgiref.
set -eu

PY="${NRC_NOVA_PYTHON:-/usr/bin/python3}"
PKGS="python3-ironic python3-keystone python3-pymysql"

have_modules() {
    [ -x "$PY" ] && "$PY" -c 'import ironic.cmd.api, ironic.cmd.dbsync, ironic.objects, keystone.cmd.manage, keystone.server.wsgi, pymysql' >/dev/null 2>&1
}

if have_modules; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-real-ironic: $PY cannot import ironic and apt-get is not available; install $PKGS by other means." >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install-real-ironic: must run as root (or with sudo) to apt-get install $PKGS." >&2
        exit 1
    fi
fi

if ! $SUDO apt-get update -qq >/dev/null; then
    echo "install-real-ironic: 'apt-get update' failed." >&2
    exit 1
fi
# These library packages start no service (ironic-api, ironic-conductor and
# keystone are separate packages).
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PKGS >/dev/null; then
    echo "install-real-ironic: 'apt-get install $PKGS' failed." >&2
    exit 1
fi

if ! have_modules; then
    echo "install-real-ironic: installed $PKGS but $PY still cannot import ironic." >&2
    "$PY" -c 'import ironic.cmd.api, ironic.cmd.dbsync, ironic.objects, keystone.cmd.manage, keystone.server.wsgi, pymysql' >&2 || true
    exit 1
fi
exit 0
