#!/usr/bin/env bash
# Issue #35: how long a consumer group takes to settle, classic protocol against KIP-848's consumer
# protocol, on Spool and on Apache Kafka 4.x (one broker each, tests/fixtures/start-*.sh), with
# Kafka's Java client. bench/rebalance/RebalanceBench.java runs 20 members (threads of one JVM) of
# one group over a topic of 200 partitions and times three phases, each until every partition is
# owned by exactly one member and every member owns its fair share:
#   join    the 20 members start at once
#   leave   one closes (leaves the group)
#   add     a new one starts
# Rounds alternate the brokers (Spool, Kafka, Spool, ...) and each round runs both protocols with a
# new group. Both brokers start with group.initial.rebalance.delay.ms=0 (the Kafka fixture's
# setting; Spool's default is Kafka's 3000), everything else at their defaults: KIP-848's heartbeat
# interval is 5 s on both, which bounds how fast a consumer-protocol member hears of a change.
#
#   bench/rebalance.sh [ROUNDS] [MEMBERS] [PARTITIONS]     (defaults: 3 rounds, 20, 200)
#
# Results: bench/results/<stamp>-rebalance/{raw.jsonl,results.md}; medians of the rounds, with the
# load average of each run (the machine may be shared). Appends to bench/results/history.tsv
# (bench/history.py) unless NO_HISTORY=1.
set -euo pipefail
cd "$(dirname "$0")/.."
bench=rebalance
source bench/java_bench.sh
rounds=${1:-3} members=${2:-20} partitions=${3:-200}
java_bench_setup bench/rebalance/RebalanceBench.java
declare -A addr
addr[spool]=$(bash tests/fixtures/start-spool.sh start --bin "$spool_bin" --data-dir "$work/spool" \
    --override group.initial.rebalance.delay.ms=0 | tail -1)
addr[kafka]=$(bash tests/fixtures/start-kafka.sh start --data-dir "$work/kafka" | tail -1)
echo "rebalance.sh: Spool at ${addr[spool]}, Kafka $(basename "$kafka_dir") at ${addr[kafka]}; $rounds rounds, $members members, $partitions partitions" >&2

for ((i = 1; i <= rounds; i++)); do
    for b in spool kafka; do
        for protocol in classic consumer; do
            log=$work/$b-$protocol-$i.log
            load=$(cut -d' ' -f1 /proc/loadavg)
            if ! java_bench_run RebalanceBench --bootstrap "${addr[$b]}" \
                    --topic "rebalance-p$partitions" --group "g-$protocol-$i" --protocol $protocol \
                    --members "$members" --partitions "$partitions" >"$log" 2>"$log.err"; then
                echo "rebalance.sh: $b $protocol round $i did not settle (see below)" >&2
                tail -5 "$log.err" >&2
            fi
            java_bench_record "$log" $b "$load" $i
        done
    done
done

python3 - "$out/raw.jsonl" "$rounds" "$members" "$partitions" "$(basename "$kafka_dir")" >"$out/results.md" <<'PY'
import json, statistics, sys
from collections import defaultdict
raw, rounds, members, partitions, kafka = sys.argv[1:6]
runs = defaultdict(list)
timeouts = defaultdict(int)
for line in open(raw):
    r = json.loads(line)
    key = (r["scenario"], r["cluster"])
    if r.get("seconds") is None:
        timeouts[key] += 1
    else:
        runs[key].append(r["seconds"])
def med(key):
    v = runs.get(key)
    s = f"{statistics.median(v):.2f} s" if v else "-"
    return s + (f" ({timeouts[key]} timed out)" if timeouts.get(key) else "")
print(f"# Rebalance: {members} members, {partitions} partitions, medians of {rounds} rounds\n")
print(f"| phase | Spool | {kafka} | Spool/Kafka |")
print("|---|---:|---:|---:|")
for protocol in ("classic", "consumer"):
    for phase in ("join", "leave", "add"):
        s = f"{protocol}_{phase}"
        a, b = runs.get((s, "spool")), runs.get((s, "kafka"))
        ratio = f"{statistics.median(a) / statistics.median(b):.2f}x" if a and b and statistics.median(b) else "-"
        print(f"| {protocol} {phase} | {med((s, 'spool'))} | {med((s, 'kafka'))} | {ratio} |")
print("\nLower is better. Seconds from the event until every partition is owned by exactly one member")
print("and every member owns its fair share. raw.jsonl has every run with its load average.")
PY
cat "$out/results.md"
[[ -n "${NO_HISTORY:-}" ]] || python3 bench/history.py append --source rebalance "$out/raw.jsonl" \
    classic_join:seconds:lower classic_leave:seconds:lower classic_add:seconds:lower \
    consumer_join:seconds:lower consumer_leave:seconds:lower consumer_add:seconds:lower
