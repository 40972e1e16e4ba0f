#!/usr/bin/env bash
# Stops what start.sh started in DIR (by the pids it recorded) and removes DIR unless KEEP=1.
set -uo pipefail
DIR="${1:?usage: stop.sh DIR}"
for name in controller-manager apiserver etcd; do
    if [ -f "$DIR/$name.pid" ]; then
        pid=$(cat "$DIR/$name.pid")
        kill "$pid" 2>/dev/null
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null
        rm -f "$DIR/$name.pid"
    fi
done
[ "${KEEP:-0}" = 1 ] || rm -rf "$DIR"
