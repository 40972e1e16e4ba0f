#!/usr/bin/env bash
# Integration check against a real spool-broker: /readyz turns ready, and the metrics move as a
# real Kafka client (kcat) produces and consumes. Not registered with CTest until broker/app
# wires the HTTP service; then: add_test(NAME http_metrics_follow_real_traffic COMMAND bash
# <this> $<TARGET_FILE:spool-broker>) with LABELS integration.
# usage: broker_traffic_check.sh <path to spool-broker>
set -euo pipefail

broker=$1
for tool in curl kcat promtool; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool missing (scripts/setup.sh --with-tests)"; exit 1; }
done
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
kafka_port=$(free_port)
http_port=$(free_port)
work=$(mktemp -d)
"$broker" --override listeners="PLAINTEXT://127.0.0.1:$kafka_port" \
    --override http.listener="127.0.0.1:$http_port" \
    --override log.dirs="$work/data" >"$work/broker.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
base="http://127.0.0.1:$http_port"

ready=0
for _ in $(seq 100); do
    if [[ $(curl -s -o /dev/null -w '%{http_code}' "$base/readyz") == 200 ]]; then ready=1; break; fi
    sleep 0.1
done
((ready)) || { echo "FAIL: /readyz never 200"; curl -s "$base/readyz"; cat "$work/broker.log"; exit 1; }
echo "ok: ready"

sample() {  # series -> value (0 when absent)
    curl -s "$base/metrics" | awk -v s="$1" 'index($0, s" ") == 1 {print $2; found=1} END {if (!found) print 0}'
}
produce_before=$(sample 'spool_broker_requests_total{api="produce"}')

seq 1 100 | kcat -P -b "127.0.0.1:$kafka_port" -t it -p 0
kcat -C -b "127.0.0.1:$kafka_port" -t it -p 0 -o beginning -c 100 -e -q >/dev/null

failures=0
check_ge() {  # name value min
    if awk -v v="$2" -v m="$3" 'BEGIN {exit !(v + 0 >= m + 0)}'; then echo "ok: $1 = $2"; else
        echo "FAIL: $1 = $2, want >= $3"; failures=$((failures + 1)); fi
}
check_ge 'records_in{topic="it"}' "$(sample 'spool_broker_records_in_total{topic="it"}')" 100
check_ge 'bytes_in{topic="it"}' "$(sample 'spool_broker_bytes_in_total{topic="it"}')" 100
check_ge 'records_out{topic="it"}' "$(sample 'spool_broker_records_out_total{topic="it"}')" 100
check_ge 'produce requests (delta)' \
    "$(awk -v a="$(sample 'spool_broker_requests_total{api="produce"}')" -v b="$produce_before" 'BEGIN {print a - b}')" 1
check_ge 'log end offset it-0' "$(sample 'spool_log_end_offset{topic="it",partition="0"}')" 100
curl -s "$base/metrics" | promtool check metrics || { echo "FAIL: promtool"; failures=$((failures + 1)); }
curl -s "$base/v1/topics/it" | grep -q '"name":"it"' || { echo "FAIL: /v1/topics/it"; failures=$((failures + 1)); }

kill -TERM "$pid"
wait "$pid" || { echo "FAIL: broker exit status $?"; failures=$((failures + 1)); }
((failures == 0)) || exit 1
echo "all checks passed"
