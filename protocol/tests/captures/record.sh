#!/usr/bin/env bash
# Re-records the real-client request captures in this folder. Run by hand (needs the peers of
# scripts/peers/fetch-all.sh, kcat and a JVM); the tests only read the recorded files.
#
#   protocol/tests/captures/record.sh [client...]     (default: kcat java kafkajs)
#
# Starts Apache Kafka (tests/fixtures/start-kafka.sh) advertising a proxy port, runs each
# client's compatibility checker (tests/compat/run-compat.sh) through capture_proxy.py, and keeps
# up to 3 request frames per (api key, version) per client in <client>/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
clients=("$@")
((${#clients[@]})) || clients=(kcat java kafkajs)

kafka_port=29092
proxy_port=19092
work=$(mktemp -d)
cleanup() {
    [[ -n "${proxy_pid:-}" ]] && kill "$proxy_pid" 2>/dev/null || true
    "$root/tests/fixtures/start-kafka.sh" stop --data-dir "$work/kafka" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

"$root/tests/fixtures/start-kafka.sh" start --data-dir "$work/kafka" --port "$kafka_port" \
    --override "advertised.listeners=PLAINTEXT://localhost:$proxy_port"
for client in "${clients[@]}"; do
    rm -rf "${here:?}/$client"
    python3 "$here/capture_proxy.py" --listen "$proxy_port" --upstream "$kafka_port" \
        --out "$here/$client" &
    proxy_pid=$!
    sleep 1
    SPOOL_BOOTSTRAP=localhost:$proxy_port "$root/tests/compat/run-compat.sh" "$client" || true
    kill "$proxy_pid"
    wait "$proxy_pid" 2>/dev/null || true
    proxy_pid=
    echo "$client: $(ls "$here/$client" | wc -l) frames"
done
