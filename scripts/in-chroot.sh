#!/bin/bash
# Runs a command inside a Debian chroot built by install-newer-nova.sh, in a
# private mount namespace: /proc (and /dev, /dev/shm) are mounted for this
# command alone and vanish with it, so nothing stays mounted in the chroot.
#
#   scripts/in-chroot.sh /var/lib/nova-reconcile/chroots/trixie /usr/bin/python3 -c '...'
#
# The chroot shares the host's network, so MariaDB answers at 127.0.0.1:3306.
# Files the command needs go under the chroot's own /tmp. The exit status is
# the command's.
set -euo pipefail
dir="${1:?usage: $0 CHROOT COMMAND [ARGS...]}"
shift
[ -d "$dir" ] || { echo "in-chroot: no chroot at $dir" >&2; exit 1; }
exec unshare --mount --propagation private -- /bin/sh -c '
  d="$1"; shift
  mount -t proc proc "$d/proc" &&
  mount --rbind /dev "$d/dev" &&
  exec chroot "$d" "$@"
' in-chroot "$dir" "$@"
