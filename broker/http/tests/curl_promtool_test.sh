#!/usr/bin/env bash
# Drives the broker HTTP endpoint with curl and checks /metrics with promtool.
# usage: curl_promtool_test.sh <path to http_fixture_server>
set -euo pipefail

fixture=$1
for tool in curl promtool; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed (scripts/setup.sh --with-tests)"; exit 1; }
done

work=$(mktemp -d)
"$fixture" >"$work/out" 2>"$work/err" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT

for _ in $(seq 100); do
    grep -q '^port ' "$work/out" && break
    sleep 0.05
done
port=$(awk '/^port /{print $2}' "$work/out")
[[ -n "$port" ]] || { echo "FAIL: fixture did not start"; cat "$work/err"; exit 1; }
base="http://127.0.0.1:$port"

failures=0
expect_status() {  # method path want [curl args...]
    local method=$1 path=$2 want=$3
    shift 3
    local got
    got=$(curl -s -o "$work/body" -w '%{http_code}' -X "$method" --max-time 5 "$@" "$base$path")
    if [[ "$got" != "$want" ]]; then
        echo "FAIL: $method $path -> $got, want $want: $(cat "$work/body")"
        failures=$((failures + 1))
    else
        echo "ok: $method $path -> $got"
    fi
}

expect_status GET /healthz 200
expect_status GET /readyz 200
expect_status GET /metrics 200
expect_status GET /v1/broker 200
expect_status GET /v1/cluster 200
expect_status GET /v1/cluster/health 200
expect_status GET /v1/topics 200
expect_status GET /v1/topics/orders 200
expect_status GET /v1/topics/missing 404
expect_status GET /v1/brokers/1/restart-safe 200
expect_status POST /v1/brokers/1/decommission 503
expect_status GET /nope 404
expect_status DELETE /healthz 405
head -c 4096 /dev/zero >"$work/big"
expect_status POST /v1/brokers/1/decommission 413 --data-binary "@$work/big"

# The 405 carries Allow and every error is the JSON error shape.
allow=$(curl -s -D - -o /dev/null -X DELETE "$base/healthz" | tr -d '\r' | awk -F': ' 'tolower($1)=="allow"{print $2}')
[[ "$allow" == "GET" ]] || { echo "FAIL: Allow header is '$allow'"; failures=$((failures + 1)); }
curl -s "$base/nope" | grep -q '"status":404' || { echo "FAIL: 404 body is not the JSON error"; failures=$((failures + 1)); }

curl -s --max-time 5 "$base/metrics" >"$work/metrics"
if promtool check metrics <"$work/metrics" >"$work/promtool" 2>&1; then
    echo "ok: promtool check metrics ($(grep -c '^# TYPE' "$work/metrics") families)"
else
    echo "FAIL: promtool check metrics:"
    cat "$work/promtool"
    failures=$((failures + 1))
fi
for family in spool_broker_bytes_in_total spool_broker_records_out_total \
    spool_broker_requests_total spool_broker_request_errors_total \
    spool_broker_request_latency_seconds spool_broker_request_queue_time_seconds \
    spool_broker_active_connections spool_broker_malformed_requests_total \
    spool_broker_partitions spool_controller_active \
    spool_log_size_bytes spool_log_start_offset spool_log_end_offset spool_log_segments \
    spool_storage_fsync_duration_seconds spool_storage_errors_total spool_consumer_groups \
    spool_consumer_group_members spool_consumer_group_rebalances_total spool_consumer_group_lag; do
    grep -q "^# TYPE $family " "$work/metrics" || { echo "FAIL: no $family"; failures=$((failures + 1)); }
done

((failures == 0)) || { echo "$failures failure(s)"; exit 1; }
echo "all checks passed"
