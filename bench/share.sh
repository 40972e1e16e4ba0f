#!/usr/bin/env bash
# Issue #35: share-group (KIP-932) consumption throughput, Spool against Apache Kafka 4.4 (one
# broker each, tests/fixtures/start-*.sh), with Kafka's Java KafkaShareConsumer.
# bench/share/ShareBench.java, one JVM a round: its KafkaProducer writes RECORDS records of SIZE
# bytes (acks=all, keyless) to a new topic of PARTITIONS partitions, then MEMBERS share consumers
# (threads of that JVM) of a new share group start at once with the client's defaults (implicit
# acknowledgement) and read from the earliest offset. Timed from their start until every record
# has been seen by some member: records/s and MB/s (1e6 B of values) over that time, the time to
# the first record (the join), the rate from the first record to the last, stalls (gaps of 100 ms
# or more between new records), each member's count,
# duplicates (records seen again after some member had them: 0 without failures), redelivered
# (deliveryCount above 1) and ack_failures (acknowledgements the broker refused).
#
# The brokers run one at a time (Spool's rounds, then Kafka's), each started once, every round
# with a new topic and group, after a warm-up round of 10,000 records (warmup_* in raw.jsonl: the
# broker's first share group, whose join on Kafka creates __consumer_offsets and
# __share_group_state, 50 partitions each; its join time is shown apart as the cold join). share.auto.offset.reset=earliest: on Kafka the GROUP config, set
# through the Admin API before the members join (what kafka-configs --entity-type groups
# --alter does); on Spool the broker-wide group.share.auto.offset.reset=earliest (no GROUP
# configs). Kafka 4.4 has share groups on by default (a new cluster finalizes share.version=1;
# the driver prints the finalized level as share_version and the script stops if Kafka has none).
# Spool serves share groups without the feature flag and finalizes no share.version ("none").
# Otherwise both brokers run at their defaults (group.share.partition.max.record.locks 2000 on
# both).
#
#   bench/share.sh [ROUNDS] [RECORDS] [PARTITIONS]      (defaults: 3 rounds, 500000, 8)
#   environment: MEMBERS (4), SIZE (100), SPOOL_KAFKA_VERSION (4.4.0), BROKERS ("spool kafka"),
#                SPOOL_BENCH_SPOOL_BIN (build/release/broker/app/spool-broker), NO_HISTORY=1
#
# Results: bench/results/<stamp>-share/{raw.jsonl,results.md} (not committed, in logs/: the
# brokers' and driver's logs, the first duplicates the driver saw, and after each Spool round
# the group's spool_share_group_* metrics, summed on stderr); medians of the rounds with the load average of each run (the machine may be
# shared). Appends to bench/results/history.tsv (bench/history.py) unless NO_HISTORY=1.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=share
source bench/java_bench.sh
rounds=${1:-3} records=${2:-500000} partitions=${3:-8} members=${MEMBERS:-4} size=${SIZE:-100}
export SPOOL_KAFKA_VERSION=${SPOOL_KAFKA_VERSION:-4.4.0}
java_bench_setup bench/share/ShareBench.java
mkdir -p "$out/logs"
echo "share.sh: Spool $spool_bin, Kafka $(basename "$kafka_dir"); $rounds rounds, $records records of $size B, $partitions partitions, $members members" >&2

declare -A reset=([spool]=broker [kafka]=group)
for b in ${BROKERS:-spool kafka}; do
    if [[ $b == spool ]]; then
        http=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        addr=$(bash tests/fixtures/start-spool.sh start --bin "$spool_bin" --data-dir "$work/spool" \
            --override group.share.auto.offset.reset=earliest --override "http.listener=127.0.0.1:$http" | tail -1)
    else
        addr=$(bash tests/fixtures/start-kafka.sh start --data-dir "$work/kafka" | tail -1)
    fi
    for ((i = 0; i <= rounds; i++)); do
        log=$out/logs/$b-$i.log
        load=$(cut -d' ' -f1 /proc/loadavg)
        # Round 0 warms up: a small topic, the broker's first share group (Kafka creates
        # __consumer_offsets and __share_group_state then); recorded as warmup_*.
        n=$records label=()
        ((i > 0)) || n=$((records < 10000 ? records : 10000)) label=(--label warmup)
        if ! java_bench_run ShareBench --bootstrap "$addr" --topic "share-$i" --group "g-share-$i" \
                --members "$members" --partitions "$partitions" --records "$n" --size "$size" \
                --reset "${reset[$b]}" "${label[@]}" >"$log" 2>"$log.err"; then
            echo "share.sh: $b round $i did not finish (see below and $log.err)" >&2
            tail -5 "$log.err" >&2
        fi
        java_bench_record "$log" $b "$load" $i
        for what in duplicate 'acknowledgement failed'; do
            grep -h "^$what:" "$log.err" | head -2 >&2 || true
        done
        if [[ $b == spool ]]; then
            # The group's share metrics (docs/metrics.md): redeliveries, lock expiries, acks by type.
            curl -s "http://127.0.0.1:$http/metrics" | grep "^spool_share_group_.*group=\"g-share-$i\"" >"$log.metrics" || true
            python3 - "$log.metrics" >&2 <<'PY'
import collections, re, sys
sums = collections.Counter()
for line in open(sys.argv[1]):
    name, value = line.split()[0], float(line.split()[1])
    kind = re.search(r'type="(\w+)"', name)
    if name.split("{")[0].endswith("_total"):
        sums[name.split("{")[0].replace("spool_share_group_", "") + (f"[{kind[1]}]" if kind else "")] += value
print("  spool metrics:", " ".join(f"{k}={v:.0f}" for k, v in sorted(sums.items())))
PY
        fi
        if [[ $b == kafka ]] && grep -q '"share_version": "\(none\|0\)"' "$log"; then
            echo "share.sh: Kafka has no share groups (share.version not finalized)" >&2
            exit 1
        fi
    done
    bash tests/fixtures/start-$b.sh stop --data-dir "$work/$b" || echo "share.sh: $b did not stop cleanly" >&2
    cp "$work/$b/$b.log" "$out/logs/" 2>/dev/null || true
done

python3 - "$out/raw.jsonl" "$rounds" "$records" "$size" "$partitions" "$members" "$(basename "$kafka_dir")" >"$out/results.md" <<'PY'
import json, statistics, sys
from collections import defaultdict
raw, rounds, records, size, partitions, members, kafka = sys.argv[1:8]
runs = defaultdict(list)
for line in open(raw):
    r = json.loads(line)
    runs[(r["scenario"], r["cluster"])].append(r)
def med(scenario, cluster, metric, ok_only=True):
    v = [r[metric] for r in runs.get((scenario, cluster), []) if not (ok_only and r["failed"])]
    return statistics.median(v) if v else None
def fmt(v, digits):
    return "-" if v is None else f"{v:,.{digits}f}"
rows = [("consume", "seconds", "seconds until all consumed (lower is better)", 2),
        ("consume", "records_per_s", "records/s", 0),
        ("consume", "mb_per_s", "MB/s", 2),
        ("consume", "first_record_s", "first record, s (the join)", 2),
        ("consume", "steady_records_per_s", "records/s, first record to last", 0),
        ("consume", "max_gap_s", "longest gap between new records, s", 2),
        ("consume", "close_s", "close of the members, s", 2),
        ("produce", "records_per_s", "produce beforehand, records/s", 0),
        ("warmup_consume", "first_record_s", "cold join (warm-up round), s", 2)]
print(f"# Share group: {members} members, {partitions} partitions, {int(records):,} records of "
      f"{size} B, medians of {rounds} rounds\n")
print(f"| | Spool | {kafka} | Spool/Kafka |")
print("|---|---:|---:|---:|")
for scenario, metric, label, digits in rows:
    a, b = med(scenario, "spool", metric), med(scenario, "kafka", metric)
    ratio = f"{a / b:.2f}x" if a is not None and b else "-"
    print(f"| {label} | {fmt(a, digits)} | {fmt(b, digits)} | {ratio} |")
for metric in ("duplicates", "redelivered", "ack_failures"):
    total = {c: sum(r[metric] for r in runs.get(("consume", c), [])) for c in ("spool", "kafka")}
    print(f"| {metric}, all rounds | {total['spool']} | {total['kafka']} | |")
print("\n| run | load1 | seconds | records/s | first record s | per member | duplicates | redelivered |")
print("|---|---:|---:|---:|---:|---|---:|---:|")
for c in ("spool", "kafka"):
    for r in runs.get(("consume", c), []):
        state = " (timed out)" if r["failed"] else ""
        print(f"| {c} {r['round']}{state} | {r['load1']} | {r['seconds']:.2f} | {r['records_per_s']:,} | "
              f"{r['first_record_s']:.2f} | {r['per_member']} | {r['duplicates']} | {r['redelivered']} |")
fails = sum(r["failed"] for v in runs.values() for r in v)
print(f"\n{fails} run(s) timed out. raw.jsonl has every run; logs/ the brokers' and the driver's logs.")
PY
cat "$out/results.md"
[[ -n "${NO_HISTORY:-}" ]] || python3 bench/history.py append --source share "$out/raw.jsonl" \
    consume:records_per_s:higher consume:steady_records_per_s:higher consume:first_record_s:lower \
    consume:duplicates:lower
