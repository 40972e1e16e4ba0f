#!/usr/bin/env bash
# Stops the kube-apiserver that start.sh started in DIR, waits DOWN seconds (default 0), starts
# it again with the same flags and port and waits until /readyz answers. etcd keeps running, so
# no state is lost: what a rolling control-plane upgrade looks like to a client.
set -euo pipefail
DIR="${1:?usage: restart-apiserver.sh DIR [DOWN]}"
DOWN="${2:-0}"
pid=$(cat "$DIR/apiserver.pid")
kill "$pid" 2>/dev/null || true
for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -9 "$pid" 2>/dev/null || true
sleep "$DOWN"
"$DIR/apiserver.sh" >>"$DIR/apiserver.log" 2>&1 &
echo $! >"$DIR/apiserver.pid"
port=$(sed -n 's/.*api=\([0-9]*\).*/\1/p' "$DIR/ports")
for _ in $(seq 1 240); do
    if curl -sf --cacert "$DIR/serving.crt" -H "Authorization: Bearer spool-admin-token" \
        "https://127.0.0.1:$port/readyz" >/dev/null 2>&1; then
        exit 0
    fi
    sleep 0.5
done
echo "kube-apiserver did not come back; see $DIR/apiserver.log" >&2
exit 1
