#!/usr/bin/env bash
# Integration check against a real spool-broker (CTest: http_metrics_follow_real_traffic, label
# integration): /readyz turns ready, every metric family issue #7 asks for is on /metrics and
# passes `promtool check metrics`, and the traffic metrics move as a real Kafka client (kcat)
# produces and consumes. Every check compares a scrape before the traffic with one after it and
# relates the deltas to what was sent or to each other; no expected value is hard-coded.
#
# usage: broker_traffic_check.sh <path to spool-broker>
set -euo pipefail

broker=$1
for tool in curl kcat promtool python3 timeout; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool missing (scripts/setup.sh --with-tests)"; exit 1; }
done
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

work=$(mktemp -d)
pid=
cleanup() {
    if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Start the broker on free ports; another test may take a port between choosing and binding it
# (ctest -j), so a broker that dies early is retried on fresh ports.
start_broker() {
    kafka_port=$(free_port)
    http_port=$(free_port)
    rm -rf "$work/data"
    "$broker" --override listeners="PLAINTEXT://127.0.0.1:$kafka_port" \
        --override http.listener="127.0.0.1:$http_port" \
        --override log.dirs="$work/data" >"$work/broker.log" 2>&1 &
    pid=$!
    base="http://127.0.0.1:$http_port"
    # Generous: on a loaded machine a debug broker takes a while to open its logs.
    for _ in $(seq 600); do
        kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; pid=; return 1; }
        if [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base/readyz") == 200 ]]; then
            return 0
        fi
        sleep 0.1
    done
    echo "FAIL: /readyz never answered 200"; curl -s --max-time 2 "$base/readyz" || true
    cat "$work/broker.log"; exit 1
}
started=0
for attempt in 1 2 3; do
    if start_broker; then started=1; break; fi
    echo "broker exited during start (attempt $attempt), retrying on other ports:"
    tail -5 "$work/broker.log"
done
((started)) || { echo "FAIL: broker did not start"; cat "$work/broker.log"; exit 1; }
echo "ok: ready (kafka 127.0.0.1:$kafka_port, http $base)"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
scrape() { curl -s --max-time 10 "$base/metrics" >"$1" || fail "scrape $base/metrics"; }
# sample <file> <series> -> the value (0 when absent: a series appears on first use)
sample() {
    awk -v s="$2" 'index($0, s" ") == 1 {print $2; found=1; exit} END {if (!found) print 0}' "$1"
}
# delta <series> -> value in after.prom minus value in before.prom
delta() { awk -v a="$(sample "$work/after.prom" "$1")" -v b="$(sample "$work/before.prom" "$1")" 'BEGIN {printf "%.9g\n", a - b}'; }
# check <description> <value> <op> <bound>, op one of -eq -ge -gt (numeric, awk)
check() {
    if awk -v v="$2" -v b="$4" -v op="$3" 'BEGIN {
        if (op == "-eq") exit !(v + 0 == b + 0);
        if (op == "-ge") exit !(v + 0 >= b + 0);
        if (op == "-gt") exit !(v + 0 > b + 0);
        exit 1 }'; then
        echo "ok: $1 = $2 ($3 $4)"
    else
        fail "$1 = $2, want $3 $4"
    fi
}

topic="traffic-$$"
messages=200
scrape "$work/before.prom"

# Produce lz4-compressed batches (several records per batch, so a record count taken from batch
# headers differs from a batch count), then consume them all back.
seq 1 "$messages" | sed 's/^/message-/' >"$work/messages"
timeout 120 kcat -P -b "127.0.0.1:$kafka_port" -t "$topic" -p 0 -z lz4 -X linger.ms=20 \
    <"$work/messages" || fail "kcat produce"
timeout 120 kcat -C -b "127.0.0.1:$kafka_port" -t "$topic" -p 0 -o beginning -c "$messages" -e -q \
    >"$work/consumed" || fail "kcat consume"
check "messages consumed" "$(wc -l <"$work/consumed")" -eq "$messages"

# A consumer group: kcat joins, consumes everything and commits on the way out.
group="group-$$"
timeout 120 kcat -b "127.0.0.1:$kafka_port" -G "$group" "$topic" -o beginning -c "$messages" -e -q \
    >"$work/group-consumed" || fail "kcat group consume"
check "messages consumed by the group" "$(wc -l <"$work/group-consumed")" -eq "$messages"

# An ApiVersions request at a version the broker does not serve: answered with
# UNSUPPORTED_VERSION, so it counts as a request that carried an error. Reading the reply
# proves the broker finished with it before the next scrape.
exec 3<>"/dev/tcp/127.0.0.1/$kafka_port"
printf '\x00\x00\x00\x0b\x00\x12\x00\x63\x00\x00\x00\x07\xff\xff\x00' >&3
reply=$(timeout 10 head -c 8 <&3 | od -An -tx1 | tr -d ' \n') || true
exec 3<&- 3>&-
[[ "$reply" == *00000007 ]] || fail "no ApiVersions reply with correlation id 7 (got '$reply')"
# A frame with a negative size: malformed; the broker counts it and closes the connection.
exec 3<>"/dev/tcp/127.0.0.1/$kafka_port"
printf '\xff\xff\xff\xff' >&3
timeout 10 cat <&3 >/dev/null || true
exec 3<&- 3>&-

# Settle before comparing: the clients are gone, but a long-polling Fetch may still be parked
# (until its max wait) and the group's commit lands through __consumer_offsets, so scrape until
# every dequeued request has completed and the group's lag is visible.
sum_requests() { awk '/^spool_broker_requests_total\{/ {s += $2} END {printf "%.0f\n", s}' "$1"; }
lag_series="spool_consumer_group_lag{group=\"$group\",topic=\"$topic\",partition=\"0\"}"
for _ in $(seq 100); do
    scrape "$work/after.prom"
    if awk -v a="$(sum_requests "$work/after.prom")" \
        -v b="$(sample "$work/after.prom" spool_broker_request_queue_time_seconds_count)" \
        'BEGIN {exit !(a + 0 == b + 0)}' && grep -q "^$lag_series " "$work/after.prom"; then
        break
    fi
    sleep 0.2
done

echo "--- per-topic traffic (topic $topic)"
t="{topic=\"$topic\"}"
records_in=$(delta "spool_broker_records_in_total$t")
bytes_in=$(delta "spool_broker_bytes_in_total$t")
records_out=$(delta "spool_broker_records_out_total$t")
bytes_out=$(delta "spool_broker_bytes_out_total$t")
log_size=$(sample "$work/after.prom" "spool_log_size_bytes{topic=\"$topic\",partition=\"0\"}")
log_end=$(sample "$work/after.prom" "spool_log_end_offset{topic=\"$topic\",partition=\"0\"}")
check "records in (delta)" "$records_in" -eq "$messages"
check "log end offset" "$log_end" -eq "$messages"
check "bytes in (delta)" "$bytes_in" -gt 0
# A fresh single-partition topic: every appended batch byte is in the log.
check "bytes in (delta) vs log size" "$bytes_in" -eq "$log_size"
# Read in full twice: by the plain consumer and by the group.
check "records out (delta)" "$records_out" -ge "$((2 * messages))"
check "bytes out (delta) vs log size" "$bytes_out" -ge "$(awk -v n="$log_size" 'BEGIN {print 2 * n}')"

echo "--- per-API requests"
for api in produce fetch metadata api_versions list_offsets; do
    n=$(delta "spool_broker_requests_total{api=\"$api\"}")
    check "requests{api=$api} (delta)" "$n" -gt 0
    # Every completed request is one latency observation.
    check "latency count{api=$api} (delta) vs requests" \
        "$(delta "spool_broker_request_latency_seconds_count{api=\"$api\"}")" -eq "$n"
    check "latency +Inf bucket{api=$api} (delta) vs requests" \
        "$(delta "spool_broker_request_latency_seconds_bucket{api=\"$api\",le=\"+Inf\"}")" -eq "$n"
done
total_requests=$(awk -v a="$(sum_requests "$work/after.prom")" -v b="$(sum_requests "$work/before.prom")" \
    'BEGIN {print a - b}')
check "latency sum{api=produce} (delta)" \
    "$(delta 'spool_broker_request_latency_seconds_sum{api="produce"}')" -gt 0
check "errors{api=api_versions} (delta)" \
    "$(delta 'spool_broker_request_errors_total{api="api_versions"}')" -ge 1
check "errors{api=produce} (delta)" "$(delta 'spool_broker_request_errors_total{api="produce"}')" -eq 0
# Each request is dequeued once and, once settled, has completed.
check "queue time count (delta) vs all requests" \
    "$(delta 'spool_broker_request_queue_time_seconds_count')" -eq "$total_requests"
check "queue time count (delta)" "$(delta 'spool_broker_request_queue_time_seconds_count')" -gt 0
check "malformed requests (delta)" "$(delta 'spool_broker_malformed_requests_total')" -ge 1
check "connections accepted (delta)" "$(delta 'spool_broker_connections_total')" -ge 3

echo "--- consumer group $group"
grep -q "^$lag_series " "$work/after.prom" || fail "no $lag_series"
# The group consumed every record and committed: nothing left between its offset and the end.
check "lag of $group" "$(sample "$work/after.prom" "$lag_series")" -eq 0
check "rebalances{group} (delta)" "$(delta "spool_consumer_group_rebalances_total{group=\"$group\"}")" -ge 1
check "consumer groups (delta)" "$(delta spool_consumer_groups)" -ge 1
check "join_group requests (delta)" "$(delta 'spool_broker_requests_total{api="join_group"}')" -gt 0

echo "--- exposition"
if promtool check metrics <"$work/after.prom" >"$work/promtool" 2>&1; then
    echo "ok: promtool check metrics ($(grep -c '^# TYPE' "$work/after.prom") families)"
else
    fail "promtool check metrics:"; cat "$work/promtool"
fi
# The families issue #7 lists, as this broker exports them.
for family in spool_broker_bytes_in_total spool_broker_records_in_total \
    spool_broker_bytes_out_total spool_broker_records_out_total \
    spool_broker_requests_total spool_broker_request_errors_total \
    spool_broker_request_latency_seconds spool_broker_request_queue_time_seconds \
    spool_broker_active_connections spool_broker_malformed_requests_total \
    spool_broker_partitions spool_partitions_leader spool_partition_isr_size spool_partition_replicas \
    spool_partitions_under_replicated spool_cluster_offline_partitions \
    spool_log_size_bytes spool_log_start_offset spool_log_end_offset spool_log_segments \
    spool_consumer_groups spool_consumer_group_members spool_consumer_group_lag \
    spool_consumer_group_rebalances_total spool_storage_fsync_duration_seconds \
    spool_storage_errors_total spool_storage_segments_rolled_total; do
    grep -q "^# TYPE $family " "$work/after.prom" || fail "no family $family on /metrics"
done
grep -q "^spool_broker_request_latency_seconds_bucket{api=\"produce\",le=" "$work/after.prom" ||
    fail "latency histogram has no buckets for produce"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
((status == 0)) || fail "broker exit status $status"
if ((failures > 0)); then
    echo "--- broker log (tail)"; tail -30 "$work/broker.log"
    echo "$failures failure(s)"; exit 1
fi
echo "all checks passed"
