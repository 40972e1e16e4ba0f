#!/usr/bin/env bash
# Issue #14 item 10: librdkafka's default consumer reading 100-byte records from Spool and from
# Apache Kafka 4.x, alternated (Spool, Kafka, Spool, ...), each broker with one topic of
# 6 partitions written by the tuned producer. Both topics are written before the first read, so
# these reads are not "right after producing" (issue #36's first-read rows are
# bench/replicated.sh --brokers 1|3 --only first_read). Each run prints the loadgen's "stalls" (gaps
# of 100 ms or more between records: librdkafka's back-off once its queue holds
# queued.min.messages) and the load average; DEBUG=1 adds librdkafka's debug=fetch and counts the
# "queued.min.messages exceeded" lines. The medians go to bench/results/history.tsv
# (bench/history.py) unless NO_HISTORY=1.
#
#   bench/consume-defaults.sh [RUNS] [RECORDS]      (defaults: 3 runs, 5,000,000 records)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export BENCH_COMMIT=${BENCH_COMMIT:-$(python3 bench/history.py commit)}  # for bench/results/history.tsv
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
        load=$(cut -d' ' -f1 /proc/loadavg)
        echo "$b run $i: $result exceeded=$(grep -c "queued.min.messages exceeded" "$log" || true) load=$load"
        python3 -c 'import json, sys; d = json.loads(sys.argv[1]); d.update(cluster=sys.argv[2], scenario="consume_100B_p6_default", load1=float(sys.argv[3])); print(json.dumps(d))' \
            "$result" "$b" "$load" >>"$work/raw.jsonl"
    done
done
[[ -n "${NO_HISTORY:-}" ]] || python3 bench/history.py append --source consume-defaults "$work/raw.jsonl" \
    consume_100B_p6_default:mb_per_s consume_100B_p6_default:stalls:lower
