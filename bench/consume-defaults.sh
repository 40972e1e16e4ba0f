#!/usr/bin/env bash
# Issue #14 item 10: librdkafka's default consumer reading 100-byte records from Spool and from
# Apache Kafka 4.x, alternated (Spool, Kafka, Spool, ...), each broker with one topic of
# 6 partitions written by the tuned producer. DEBUG=1 adds librdkafka's debug=fetch and counts
# the "queued.min.messages exceeded" stalls per run (the client's own back-off).
#
#   bench/consume-defaults.sh [RUNS] [RECORDS]      (defaults: 3 runs, 5,000,000 records)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${1:-3} records=${2:-5000000}
loadgen=${SPOOL_BENCH_LOADGEN_BIN:-$root/build/release/bench/loadgen/spool-loadgen}
spool_bin=${SPOOL_BENCH_SPOOL_BIN:-$root/build/release/broker/app/spool-broker}
work=$(mktemp -d /tmp/spool-consume-defaults.XXXXXX)
trap 'bash tests/fixtures/start-spool.sh stop --data-dir "$work/spool" >/dev/null 2>&1 || true
      bash tests/fixtures/start-kafka.sh stop --data-dir "$work/kafka" >/dev/null 2>&1 || true
      rm -rf "$work"' EXIT
declare -A addr
addr[spool]=$(bash tests/fixtures/start-spool.sh start --bin "$spool_bin" --data-dir "$work/spool" | tail -1)
addr[kafka]=$(bash tests/fixtures/start-kafka.sh start --data-dir "$work/kafka" | tail -1)
for b in spool kafka; do
    "$loadgen" --mode produce --bootstrap "${addr[$b]}" --topic p100 --partitions 6 --record-size 100 \
        --records "$records" --acks 1 >/dev/null
done
for ((i = 1; i <= runs; i++)); do
    for b in spool kafka; do
        log=$work/$b-$i.log
        result=$("$loadgen" --mode consume --bootstrap "${addr[$b]}" --topic p100 --partitions 6 \
            --record-size 100 --records "$records" --client-defaults ${DEBUG:+-C debug=fetch} 2>"$log")
        echo "$b run $i: $result stalls=$(grep -c "queued.min.messages exceeded" "$log" || true) load=$(cut -d' ' -f1 /proc/loadavg)"
    done
done
