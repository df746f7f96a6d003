#!/bin/bash
# modsyms.sh MODULE.so - a transport module exports its ops table and nothing
# else (cb_tp_ops_v3): it reaches the core only through the host table, so it
# neither needs nor offers any other name.  Linking it with -z defs (in
# meson.build) already proved that every name it uses resolves without the
# executable.
set -u
mod=$1
syms=$(nm -D --defined-only "$mod" | awk '$2 ~ /^[TDRBW]$/ {print $3}' | sort)
if [ "$syms" != "cb_tp_ops_v3" ]; then
	echo "FAIL: $mod exports: ${syms:-nothing}, want only cb_tp_ops_v3"
	exit 1
fi
echo "ok: $mod exports only cb_tp_ops_v3"
