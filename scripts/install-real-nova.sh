#!/bin/sh
# Install the real Nova 26.2.2 / Placement 8.0.0 (Debian 12 packages) used as
# the reference implementation by the conformance tier
# (test/conformance/real-nova.ts). Idempotent and quiet: does nothing when the
# modules already import.
#
# The packages install into Debian's own interpreter, /usr/bin/python3. A
# python3 earlier on PATH (pyenv, venv) will NOT see them; the conformance
# helpers therefore run /usr/bin/python3 (override with NRC_NOVA_PYTHON).
set -eu

PY="${NRC_NOVA_PYTHON:-/usr/bin/python3}"
PKGS="python3-nova python3-placement python3-tooz python3-ironicclient"

have_modules() {
    [ -x "$PY" ] && "$PY" -c 'import nova.cmd.manage, placement.cmd.manage, tooz.hashring, ironicclient' >/dev/null 2>&1
}

if have_modules; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-real-nova: $PY cannot import nova/placement/tooz and apt-get is not available." >&2
    echo "install-real-nova: install the Debian 12 packages $PKGS by other means." >&2
    exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install-real-nova: must run as root (or with sudo available) to apt-get install $PKGS." >&2
        exit 1
    fi
else
    SUDO=""
fi

if ! $SUDO apt-get update -qq >/dev/null; then
    echo "install-real-nova: 'apt-get update' failed." >&2
    exit 1
fi
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PKGS >/dev/null; then
    echo "install-real-nova: 'apt-get install $PKGS' failed." >&2
    exit 1
fi

if ! have_modules; then
    echo "install-real-nova: installed $PKGS but $PY still cannot import nova.cmd.manage, placement.cmd.manage and tooz.hashring." >&2
    "$PY" -c 'import nova.cmd.manage, placement.cmd.manage, tooz.hashring, ironicclient' >&2 || true
    exit 1
fi
exit 0
