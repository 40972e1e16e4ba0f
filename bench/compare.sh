#!/usr/bin/env bash
# Two Spool builds side by side (before/after a change): the same spool-loadgen scenarios
# against build A and build B in alternation (A, B, A, B, ...) for --rounds rounds, a fresh broker
# and data directory for each, then medians and B/A ratios. Alternating in one run is what makes
# the ratio mean something on a shared machine: both builds see the same noise.
#
#   bench/compare.sh --a BIN_A --b BIN_B [--rounds N] [--out DIR]
#
# Scenarios: produce 100 B and 1 KiB records to 6 partitions (acks=1 tuned, acks=all with
# librdkafka's defaults), consume 100 B and 1 KiB with the tuned and the default consumer, and the
# acks=1 produce latency at 5 MB/s. Each broker's CPU seconds per scenario are recorded too.
# Output: DIR/raw.jsonl and DIR/compare.md (default DIR: bench/results/<stamp>-compare).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
bin_a="" bin_b="" rounds=3 out_dir=""
while (($#)); do
    case $1 in
        --a) bin_a=$(realpath "$2"); shift 2 ;;
        --b) bin_b=$(realpath "$2"); shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --out) out_dir=$2; shift 2 ;;
        *) echo "bench/compare.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -x "$bin_a" && -x "$bin_b" ]] || { echo "bench/compare.sh: --a and --b must be spool-broker binaries" >&2; exit 2; }
loadgen=${SPOOL_BENCH_LOADGEN_BIN:-$root/build/release/bench/loadgen/spool-loadgen}
[[ -x "$loadgen" ]] || { echo "bench/compare.sh: no $loadgen (build the release preset)" >&2; exit 2; }
out_dir=${out_dir:-$root/bench/results/$(date -u +%Y%m%dT%H%M%SZ)-compare}
mkdir -p "$out_dir"
raw=$out_dir/raw.jsonl
: >"$raw"
work=$(mktemp -d /tmp/spool-compare.XXXXXX)
trap 'bash tests/fixtures/start-spool.sh stop --data-dir "$work/broker" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
failed=0

cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat"; }

# scenario NAME ARGS...: one loadgen run, its JSON line tagged with build, round and broker CPU.
scenario() {
    local name=$1 before after out
    shift
    before=$(cpu_s "$pid")
    out=$(timeout -k 10 240 "$loadgen" --bootstrap "$bootstrap" "$@" 2>>"$out_dir/loadgen.log" | tail -1) || {
        echo "compare: build $build round $round $name failed" >&2
        failed=1
    }
    after=$(cpu_s "$pid")
    python3 -c 'import json,sys; d=json.loads(sys.argv[1] or "{\"failed\":1}"); d.update(build=sys.argv[2], round=int(sys.argv[3]), scenario=sys.argv[4], broker_cpu_s=round(float(sys.argv[6])-float(sys.argv[5]),2)); print(json.dumps(d))' \
        "$out" "$build" "$round" "$name" "$before" "$after" >>"$raw"
}

run_build() {
    local bin=$1
    rm -rf "$work/broker"
    mkdir -p "$work/broker"
    bootstrap=$(bash tests/fixtures/start-spool.sh start --bin "$bin" --data-dir "$work/broker" | tail -1)
    pid=$(cat "$work/broker/spool.pid" 2>/dev/null || pgrep -nf "log.dirs=$work/broker")
    local p="--partitions 6"
    "$loadgen" --bootstrap "$bootstrap" --mode produce --topic warmup $p --record-size 1024 --records 200000 --acks 1 >/dev/null 2>&1
    scenario produce_100B_acks1_p6 --mode produce --topic t100 $p --record-size 100 --records 5000000 --acks 1
    scenario produce_1024B_acks1_p6 --mode produce --topic t1024 $p --record-size 1024 --records 1500000 --acks 1
    scenario produce_100B_acks-1_p6_default --mode produce --topic d100 $p --record-size 100 --records 5000000 --acks -1 --client-defaults
    scenario produce_1024B_acks-1_p6_default --mode produce --topic d1024 $p --record-size 1024 --records 1500000 --acks -1 --client-defaults
    scenario consume_100B_p6 --mode consume --topic t100 $p --record-size 100 --records 5000000 \
        -C queued.min.messages=10000000 -C queued.max.messages.kbytes=2097151
    scenario consume_100B_p6_default --mode consume --topic t100 $p --record-size 100 --records 5000000 --client-defaults
    scenario consume_1024B_p6_default --mode consume --topic t1024 $p --record-size 1024 --records 1500000 --client-defaults
    scenario latency_5MBps --mode latency --topic lat5 --partitions 1 --record-size 1024 --rate-mb 5 --duration 15 --acks 1 -X linger.ms=0
    bash tests/fixtures/start-spool.sh stop --data-dir "$work/broker" >/dev/null
}

echo "compare: A=$bin_a B=$bin_b, $rounds round(s); results in $out_dir"
for ((round = 1; round <= rounds; round++)); do
    for build in A B; do
        [[ $build == A ]] && bin=$bin_a || bin=$bin_b
        echo "compare: round $round/$rounds build $build (load $(cut -d' ' -f1-3 /proc/loadavg))"
        run_build "$bin"
    done
done

python3 - "$raw" "$bin_a" "$bin_b" "$rounds" >"$out_dir/compare.md" <<'EOF'
import json, statistics, sys
raw, a, b, rounds = sys.argv[1:5]
rows = [json.loads(l) for l in open(raw)]
metric = lambda r: r.get("mb_per_s") if "mb_per_s" in r else r.get("p99_us")
print(f"Two Spool builds alternated, {rounds} round(s), medians. A = `{a}`, B = `{b}`.\n")
print("| scenario | metric | A | B | B/A | broker CPU s A / B |")
print("|---|---|---:|---:|---:|---:|")
for name in dict.fromkeys(r["scenario"] for r in rows):
    vals, cpu = {}, {}
    for build in "AB":
        sel = [r for r in rows if r["scenario"] == name and r["build"] == build and not r.get("failed")]
        vals[build] = statistics.median([metric(r) for r in sel]) if sel else None
        cpu[build] = statistics.median([r["broker_cpu_s"] for r in sel]) if sel else None
    unit = "p99 µs" if name.startswith("latency") else "MB/s"
    ratio = f"{vals['B'] / vals['A']:.2f}" if vals["A"] and vals["B"] else "n/a"
    fmt = lambda v: "n/a" if v is None else f"{v:,.1f}"
    print(f"| {name} | {unit} | {fmt(vals['A'])} | {fmt(vals['B'])} | {ratio} | {fmt(cpu['A'])} / {fmt(cpu['B'])} |")
EOF
cat "$out_dir/compare.md"
exit $failed
