#!/bin/sh
# Install the clients the clients tier runs (npm run test:clients): Debian 12's
# ansible-core 2.14, puppet 7.23, prometheus 2.42 (for promtool) and systemd
# 252 (systemd-analyze), with sh, setsid and man. Idempotent and quiet:
# apt-get runs only for the packages that are missing. Only the programs are
# used: where an init system runs, Debian's postinst starts prometheus (and
# puppet's agent stays disabled); the tier starts no service.
set -eu

need=""
for pair in ansible-playbook:ansible-core puppet:puppet promtool:prometheus systemd-analyze:systemd setsid:util-linux man:man-db; do
    command -v "${pair%%:*}" >/dev/null 2>&1 || need="$need ${pair#*:}"
done

if [ -z "$need" ]; then
    exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-clients: missing$need and apt-get is not available; install them by other means." >&2
    exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO="sudo"
    else
        echo "install-clients: must run as root (or with sudo) to apt-get install$need." >&2
        exit 1
    fi
fi

if ! $SUDO apt-get update -qq >/dev/null; then
    echo "install-clients: 'apt-get update' failed." >&2
    exit 1
fi
# shellcheck disable=SC2086 # $need is a list of package names
if ! $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need >/dev/null; then
    echo "install-clients: 'apt-get install$need' failed." >&2
    exit 1
fi
