#!/usr/bin/env bash
# Side-by-side benchmark: Apache Kafka 4.x (KRaft, one node, from Maven Central jars) and Spool on
# this machine, driven by the same spool-loadgen binary (librdkafka) with the same settings, in
# alternation (Kafka, Spool, Kafka, Spool, ...) for --rounds rounds. Writes raw results as JSON lines
# and a markdown table with medians and Spool/Kafka ratios to bench/results/.
#
#   bench/run.sh [--rounds N] [--quick] [--only kafka|spool]
#
# --quick shrinks every scenario (for a smoke run); the published table uses the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

rounds=3 quick=0 only=""
while (($#)); do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --only) only=$2; shift 2 ;;
        *) echo "bench/run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done

bash scripts/setup.sh --with-tests
bash scripts/setup.sh --bench
cmake --preset release >/dev/null
cmake --build --preset release --target spool-broker spool-loadgen
loadgen=$root/build/release/bench/loadgen/spool-loadgen
spool_bin=$root/build/release/broker/app/spool-broker

stamp=$(date -u +%Y%m%dT%H%M%SZ)
out_dir=$root/bench/results/$stamp
work=$(mktemp -d /tmp/spool-bench.XXXXXX)
mkdir -p "$out_dir"
raw=$out_dir/raw.jsonl
trap 'stop_broker || true; rm -rf "$work"' EXIT

if ((quick)); then
    small_records=200000 big_records=50000 latency_s=4
else
    small_records=3000000 big_records=600000 latency_s=15
fi

# record KEY=VALUE...: appends one JSON line {broker, round, scenario, ...loadgen output}.
record() {
    local broker=$1 round=$2 scenario=$3 json=${4:-}
    # A failed loadgen run prints nothing: keep the row, marked failed, so the table says n/a.
    [[ -n "$json" ]] || json='{"failed": 1, "error": "no result"}'
    python3 -c 'import json,sys; d=json.loads(sys.argv[4]); d.update(broker=sys.argv[1], round=int(sys.argv[2]), scenario=sys.argv[3]); print(json.dumps(d))' \
        "$broker" "$round" "$scenario" "$json" >>"$raw"
}

# ---- machine limits, measured in the same run for context ----
machine_limits() {
    local f=$work/ddtest mbps
    mbps=$(dd if=/dev/zero of="$f" bs=1M count=1024 conv=fdatasync 2>&1 | awk '/copied/ {print $(NF-1), $NF}')
    rm -f "$f"
    record machine 0 disk_seq_write "{\"value\":\"$mbps\"}"
    iperf3 -s -1 -p 5599 >/dev/null 2>&1 &
    sleep 0.5
    local gbps
    gbps=$(iperf3 -c 127.0.0.1 -p 5599 -t 3 -J | python3 -c 'import json,sys; print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8e6))')
    record machine 0 loopback_tcp "{\"mb_per_s\":$gbps}"
    for size in 100 1024; do
        n=$((size == 100 ? small_records : big_records))
        record mock 0 "produce_${size}B_acks1_p1" "$("$loadgen" --mode produce --mock --record-size $size --records $n --acks 1 2>/dev/null)"
    done
}

broker_pid=""
broker_kind=""
bootstrap=""
started_ns=0  # set by start_broker (not run in a subshell: it sets these globals)

start_broker() {
    broker_kind=$1
    local dir=$work/$broker_kind
    rm -rf "$dir"
    mkdir -p "$dir"
    started_ns=$(date +%s%N)
    if [[ $broker_kind == kafka ]]; then
        bootstrap=$(bash tests/fixtures/start-kafka.sh start --data-dir "$dir")
        broker_pid=$(cat "$dir/kafka.pid")
    else
        local port
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        "$spool_bin" --override listeners=PLAINTEXT://127.0.0.1:$port \
            --override log.dirs="$dir/logs" --override http.listener=127.0.0.1:0 \
            >"$dir/spool.log" 2>&1 &
        broker_pid=$!
        bootstrap=127.0.0.1:$port
    fi
}

stop_broker() {
    [[ -n "$broker_pid" ]] || return 0
    if [[ $broker_kind == kafka ]]; then
        bash tests/fixtures/start-kafka.sh stop --data-dir "$work/kafka" >/dev/null 2>&1 || true
    else
        kill -TERM "$broker_pid" 2>/dev/null || true
        wait "$broker_pid" 2>/dev/null || true
    fi
    broker_pid=""
}

rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# Samples the broker's resident memory every 200 ms into a file until stopped; prints the peak.
rss_sampler_start() {
    (peak=0; while kill -0 "$broker_pid" 2>/dev/null; do
        r=$(rss_kib "$broker_pid"); ((r > peak)) && peak=$r && echo "$peak" >"$work/rss_peak"
        sleep 0.2
    done) &
    sampler_pid=$!
}

run_round() {
    local kind=$1 round=$2 json
    start_broker "$kind"
    json=$("$loadgen" --mode first-produce --bootstrap "$bootstrap" --topic first-produce \
        --since-epoch-ns "$started_ns" --duration 90 2>/dev/null) || true
    record "$kind" "$round" first_produce "$json"
    sleep 2
    record "$kind" "$round" rss_idle "{\"kib\":$(rss_kib "$broker_pid")}"
    echo 0 >"$work/rss_peak"
    rss_sampler_start
    for size in 100 1024; do
        n=$((size == 100 ? small_records : big_records))
        for acks in 1 -1; do
            for parts in 1 6; do
                topic=p${size}a${acks#-}p${parts}r$round
                json=$("$loadgen" --mode produce --bootstrap "$bootstrap" --topic "$topic" \
                    --partitions $parts --record-size $size --records $n --acks "$acks" 2>/dev/null) || true
                record "$kind" "$round" "produce_${size}B_acks${acks}_p${parts}" "$json"
            done
        done
    done
    json=$("$loadgen" --mode consume --bootstrap "$bootstrap" --topic p1024a1p6r$round \
        --partitions 6 --record-size 1024 --records $big_records 2>/dev/null) || true
    record "$kind" "$round" consume_1024B_p6 "$json"
    for rate in 5 50; do
        json=$("$loadgen" --mode latency --bootstrap "$bootstrap" --topic lat${rate}r$round \
            --partitions 1 --record-size 1024 --rate-mb $rate --duration $latency_s --acks 1 \
            -X linger.ms=0 2>/dev/null) || true
        record "$kind" "$round" "latency_${rate}MBps" "$json"
    done
    record "$kind" "$round" rss_load "{\"kib\":$(cat "$work/rss_peak")}"
    stop_broker
    kill "$sampler_pid" 2>/dev/null || true
}

machine_limits
for ((round = 1; round <= rounds; round++)); do
    for kind in kafka spool; do
        [[ -z "$only" || "$only" == "$kind" ]] || continue
        echo "bench: round $round: $kind" >&2
        run_round "$kind" "$round"
    done
done

python3 bench/report.py "$raw" --machine "$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r)" \
    >"$out_dir/results.md"
cp "$out_dir/results.md" bench/results/latest.md
cat bench/results/latest.md
