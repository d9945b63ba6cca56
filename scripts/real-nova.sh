#!/bin/bash
# Run the real (Debian 12) nova-manage or placement-manage by hand, the way the
# conformance tier does (test/conformance/real-nova.ts):
#
#   scripts/real-nova.sh nova-manage --config-file /tmp/x/nova.conf cell_v2 list_cells
#   scripts/real-nova.sh placement-manage --config-file /tmp/x/nova.conf db version
#
# There is no nova-manage executable in python3-nova; this runs
# `python3 -c 'from nova.cmd.manage import main' ...` with Debian's interpreter
# (/usr/bin/python3, or NRC_NOVA_PYTHON) and removes the one eventlet/urllib3
# warning line nova prints on stderr on every run. Put `[DEFAULT] log_file`
# in the conf so oslo.log stays off the terminal. The exit status is the tool's.
set -u

PY="${NRC_NOVA_PYTHON:-/usr/bin/python3}"
WARNING_RE='^Modules with known eventlet monkey patching issues were imported prior to eventlet monkey patching: [A-Za-z0-9_., ]+\. This warning can usually be ignored if the caller is only importing and not executing nova code\.$'

if [ $# -lt 1 ]; then
    echo "usage: $0 nova-manage|placement-manage ARGS..." >&2
    exit 2
fi
tool="$1"
shift
case "$tool" in
    # argv[0] is set so argparse/oslo.config say "usage: nova-manage", as the
    # packaged console script would, instead of "usage: -c".
    nova-manage) code='import sys; sys.argv[0] = "nova-manage"; from nova.cmd.manage import main; sys.exit(main())' ;;
    placement-manage) code='import sys; sys.argv[0] = "placement-manage"; from placement.cmd.manage import main; sys.exit(main())' ;;
    *)
        echo "$0: unknown tool '$tool' (nova-manage or placement-manage)" >&2
        exit 2
        ;;
esac

# The tool's stdout goes straight to ours (fd 3); only its stderr is piped
# through the filter.
exec 3>&1
"$PY" -c "$code" "$@" 2>&1 1>&3 3>&- | grep -Ev "$WARNING_RE" >&2
rc=${PIPESTATUS[0]}
exec 3>&-
exit "$rc"
