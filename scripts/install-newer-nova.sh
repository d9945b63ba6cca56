#!/bin/bash
# Builds a Debian chroot holding a newer real Nova and Placement, for the
# conformance tier's newer releases (test/conformance/release.ts):
#
#   scripts/install-newer-nova.sh trixie   # Debian 13: Nova 31.0.0, Placement 13.0.0 (2025.1)
#   scripts/install-newer-nova.sh sid      # Debian sid: the newest packaged Nova
#
# The chroot is /var/lib/nova-reconcile/chroots/<suite> (NRC_CHROOT_ROOT
# overrides the parent). Idempotent: a chroot whose python imports nova and
# placement is left as it is. Nothing is bind-mounted into it for good: the
# tier runs each command in a private mount namespace that mounts /proc for
# that command only (scripts/in-chroot.sh), so `rm -rf` of a chroot never
# follows a mount into the host.
#
# Exit status: 0 ready; 1 the build failed (the message says where).
set -euo pipefail

suite="${1:?usage: $0 trixie|sid}"
root="${NRC_CHROOT_ROOT:-/var/lib/nova-reconcile/chroots}"
dir="$root/$suite"
mirror="${NRC_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
here="$(cd "$(dirname "$0")" && pwd)"
PKGS="python3-nova python3-placement placement-common python3-pymysql python3-ironicclient python3-wsgi-intercept python3-tooz"

say() { printf 'install-newer-nova(%s): %s\n' "$suite" "$*" >&2; }

ready() {
  [ -f "$dir/.nrc-ready" ] && bash "$here/in-chroot.sh" "$dir" /usr/bin/python3 -c 'import nova.cmd.manage, placement.cmd.manage' >/dev/null 2>&1
}

if ready; then
  exit 0
fi

if ! command -v debootstrap >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

if [ ! -x "$dir/usr/bin/apt-get" ]; then
  say "debootstrap --variant=minbase $suite $dir (a few minutes)"
  rm -rf --one-file-system "$dir"
  mkdir -p "$root"
  if ! debootstrap --variant=minbase "$suite" "$dir" "$mirror" >"$root/$suite.debootstrap.log" 2>&1; then
    say "debootstrap failed; the last lines of $root/$suite.debootstrap.log:"
    tail -n 15 "$root/$suite.debootstrap.log" >&2
    exit 1
  fi
fi

# No daemon starts inside the chroot; the stored mirror's Release file can be
# past its Valid-Until date (sid).
printf '#!/bin/sh\nexit 101\n' >"$dir/usr/sbin/policy-rc.d"
chmod 755 "$dir/usr/sbin/policy-rc.d"
printf 'deb %s %s main\n' "$mirror" "$suite" >"$dir/etc/apt/sources.list"
printf 'Acquire::Check-Valid-Until "false";\n' >"$dir/etc/apt/apt.conf.d/99nrc-valid-until"
cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true

say "apt-get install $PKGS"
if ! bash "$here/in-chroot.sh" "$dir" /bin/sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PKGS" >"$root/$suite.apt.log" 2>&1; then
  say "apt-get install failed; the last lines of $root/$suite.apt.log:"
  tail -n 15 "$root/$suite.apt.log" >&2
  exit 1
fi
bash "$here/in-chroot.sh" "$dir" /bin/sh -c 'apt-get clean' >/dev/null 2>&1 || true

if ! bash "$here/in-chroot.sh" "$dir" /usr/bin/python3 -c 'import nova.cmd.manage, placement.cmd.manage' >&2; then
  say "python3-nova is installed but does not import"
  exit 1
fi
touch "$dir/.nrc-ready"
say "ready: $(bash "$here/in-chroot.sh" "$dir" /usr/bin/python3 -c 'import importlib.metadata as m; print("nova", m.version("nova"), "placement", m.version("openstack-placement"))')"
