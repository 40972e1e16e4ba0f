#!/usr/bin/env bash
# Real-client check of incremental fetch sessions (KIP-227; CTest compat_java_fetch_sessions):
# the Java consumer (kafka-consumer-perf-test, Kafka 4.1.1) reads a topic in a few hundred small
# fetches, and the broker's /metrics must show that it kept one session all along: no fetch
# answered INVALID_FETCH_SESSION_EPOCH or FETCH_SESSION_ID_NOT_FOUND, no fetch error at all, and
# only a handful of sessions opened over many fetches (a rebuilt session costs one each time).
# librdkafka (kcat) does not use sessions, so it only produces here.
#
# usage: fetch_sessions_java.sh <path to spool-broker>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
broker=$1
for tool in curl kcat java python3 timeout; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool missing (scripts/setup.sh --with-tests)"; exit 1; }
done
kafka_dir=$(bash "$root/scripts/peers/fetch-kafka.sh")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

work=$(mktemp -d)
pid=
cleanup() {
    if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

kafka_port=$(free_port)
http_port=$(free_port)
"$broker" --override listeners="PLAINTEXT://127.0.0.1:$kafka_port" \
    --override http.listener="127.0.0.1:$http_port" --override log.dirs="$work/data" \
    >"$work/broker.log" 2>&1 &
pid=$!
base="http://127.0.0.1:$http_port"
for _ in $(seq 300); do
    [[ $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$base/readyz") == 200 ]] && break
    kill -0 "$pid" 2>/dev/null || { echo "FAIL: broker exited"; cat "$work/broker.log"; exit 1; }
    sleep 0.1
done
bootstrap=127.0.0.1:$kafka_port

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
scrape() { curl -s --max-time 10 "$base/metrics" >"$1" || fail "scrape $base/metrics"; }
sample() { awk -v s="$2" 'index($0, s" ") == 1 {print $2; found=1; exit} END {if (!found) print 0}' "$1"; }
delta() { awk -v a="$(sample "$work/after.prom" "$1")" -v b="$(sample "$work/before.prom" "$1")" 'BEGIN {printf "%.0f\n", a - b}'; }
check() {
    if awk -v v="$2" -v b="$4" -v op="$3" 'BEGIN {
        if (op == "-eq") exit !(v + 0 == b + 0);
        if (op == "-ge") exit !(v + 0 >= b + 0);
        if (op == "-le") exit !(v + 0 <= b + 0);
        exit 1 }'; then
        echo "ok: $1 = $2 ($3 $4)"
    else
        fail "$1 = $2, want $3 $4"
    fi
}

# Small batches (20 records), so that a small max.partition.fetch.bytes (--fetch-size) takes
# many fetches.
records=20000
seq 1 "$records" | sed 's/^/record-/' >"$work/records"
timeout 120 kcat -P -b "$bootstrap" -t sessions -p 0 -X batch.num.messages=20 -X linger.ms=1 \
    <"$work/records" || fail "kcat produce"
scrape "$work/before.prom"
timeout 180 java -Xmx512m -Xshare:auto -Dlog4j2.configurationFile="$here/java/log4j2.properties" \
    -cp "$kafka_dir/libs/*" org.apache.kafka.tools.ConsumerPerformance --bootstrap-server "$bootstrap" \
    --topic sessions --messages "$records" --group fetch-sessions --timeout 30000 \
    --fetch-size 2048 >"$work/perf.out" 2>&1 || { fail "kafka-consumer-perf-test"; cat "$work/perf.out"; }
consumed=$(awk -F', *' 'NF >= 10 && $5 ~ /^[0-9]+$/ {n = $5} END {print n + 0}' "$work/perf.out")
check "records consumed by the Java consumer" "$consumed" -eq "$records"
scrape "$work/after.prom"

fetches=$(delta 'spool_broker_requests_total{api="fetch"}')
check "fetch requests" "$fetches" -ge 200
check "fetch responses carrying an error" "$(delta 'spool_broker_request_errors_total{api="fetch"}')" -eq 0
check "INVALID_FETCH_SESSION_EPOCH answers" "$(delta spool_broker_fetch_session_invalid_epoch_total)" -eq 0
check "FETCH_SESSION_ID_NOT_FOUND answers" "$(delta spool_broker_fetch_session_not_found_total)" -eq 0
created=$(delta spool_broker_fetch_sessions_created_total)
check "sessions opened" "$created" -ge 1
check "sessions opened (over $fetches fetches)" "$created" -le 3
if ((failures)); then
    echo "---- broker log ----"; tail -20 "$work/broker.log"
    echo "$failures check(s) failed"; exit 1
fi
echo "all checks passed"
