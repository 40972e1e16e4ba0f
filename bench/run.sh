#!/usr/bin/env bash
# Side-by-side benchmark: Apache Kafka 4.x (KRaft, one node, from Maven Central jars), Spool and
# librdkafka's in-process mock cluster (the ceiling) on this machine, driven by the same
# spool-loadgen binary (librdkafka) with the same settings, in alternation (Kafka, Spool, mock,
# Kafka, ...) for --rounds rounds (default 5). Every produce and consume scenario runs three ways
# on both brokers: tuned (the loadgen's settings below), "_default" (librdkafka's own defaults:
# what users run) and "_java" (Kafka's kafka-producer-perf-test / kafka-consumer-perf-test, the
# Java client with its defaults, from the cached Kafka distribution). Writes raw results as JSON lines and a markdown
# table of medians, Spool/Kafka ratios, Spool/ceiling and each broker's CPU time to
# bench/results/<stamp>/.
#
#   bench/run.sh [--rounds N] [--quick] [--only kafka|spool|mock] [--skip-setup] [--no-readme]
#
# A full run (no --quick, no --only, 3+ rounds) also refreshes bench/results/latest.md and the table in
# README.md (between <!-- bench:begin --> and <!-- bench:end -->). --quick shrinks every scenario
# for a smoke run; its table stays in bench/results/<stamp>/ only. --skip-setup skips
# scripts/setup.sh (packages already installed). SPOOL_BENCH_BUILD_DIR picks the build directory
# (default build/release, configured with the release preset); SPOOL_BENCH_SPOOL_BIN and
# SPOOL_BENCH_LOADGEN_BIN (both) use prebuilt binaries instead, e.g. to compare two broker builds.
#
# A run without --quick appends its latency (and a few throughput) rows' medians to
# bench/results/history.tsv; `python3 bench/history.py show` prints them per commit.
#
# Fails loudly (exit 1, broker log on stderr) when a broker does not start or dies during a round.
# Every load generator run has a time limit; a run that fails or times out is left out of the
# medians, listed at the end, and makes the exit status 1 after the table is written.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
command_line="bench/run.sh${*:+ $*}"
export BENCH_COMMIT=${BENCH_COMMIT:-$(python3 bench/history.py commit)}  # for bench/results/history.tsv

rounds=5 quick=0 only="" skip_setup=0 readme=1
while (($#)); do
    case $1 in
        --rounds) rounds=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --only) only=$2; shift 2 ;;
        --skip-setup) skip_setup=1; shift ;;
        --no-readme) readme=0; shift ;;
        *) echo "bench/run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -z "$only" || "$only" =~ ^(kafka|spool|mock)$ ]] || { echo "bench/run.sh: --only kafka|spool|mock" >&2; exit 2; }
((rounds >= 1)) || { echo "bench/run.sh: --rounds must be at least 1" >&2; exit 2; }

say() { echo "bench: $*" >&2; }
die() {
    echo "bench: FATAL: $*" >&2
    exit 1
}

if ((!skip_setup)); then
    bash scripts/setup.sh --with-tests
    bash scripts/setup.sh --bench
fi
build_dir=${SPOOL_BENCH_BUILD_DIR:-build/release}
if [[ -z "${SPOOL_BENCH_SPOOL_BIN:-}" || -z "${SPOOL_BENCH_LOADGEN_BIN:-}" ]]; then
    cmake --preset release -B "$build_dir" >/dev/null
    cmake --build "$build_dir" --target spool-broker spool-loadgen
fi
loadgen_bin=$(realpath "${SPOOL_BENCH_LOADGEN_BIN:-$build_dir/bench/loadgen/spool-loadgen}")
spool_bin=$(realpath "${SPOOL_BENCH_SPOOL_BIN:-$build_dir/broker/app/spool-broker}")
[[ -x "$loadgen_bin" && -x "$spool_bin" ]] || die "missing $loadgen_bin or $spool_bin"
kafka_dir=$(bash scripts/peers/fetch-kafka.sh)

stamp=$(date -u +%Y%m%dT%H%M%SZ)
out_dir=$root/bench/results/$stamp
work=$(mktemp -d /tmp/spool-bench.XXXXXX)
mkdir -p "$out_dir/logs"
raw=$out_dir/raw.jsonl
failures=$out_dir/failures.txt
: >"$failures"

if ((quick)); then
    small_records=200000 big_records=50000 latency_s=4
else
    # About 2-7 s per produce scenario on a 2-core machine: long enough that connection set-up
    # and one slow flush do not decide the result.
    small_records=5000000 big_records=1500000 latency_s=15
fi
# Consume (served from page cache) is client-bound: the client's per-record cost sets the rate,
# so it runs client_bound_passes times per round for a steadier median. (Repeating the 100-byte
# produce scenarios too was tried: the extra GiBs written per round slowed every later scenario
# on both brokers, the page cache filling, and made the table noisier, not steadier.)
# librdkafka 2.0.2 stops fetching once its local queue passes queued.min.messages and then backs
# off up to 1 s (librdkafka issue #2879), whatever the broker; with 100-byte records that stall
# decided the consume figure for both brokers, so the consumer may queue everything it reads.
# Stated in the report.
client_bound_passes=3
consumer_settings=(-C queued.min.messages=10000000 -C queued.max.messages.kbytes=2097151)
produce_limit=240 consume_limit=180 latency_limit=$((latency_s + 60)) first_produce_limit=100

# record BROKER ROUND SCENARIO JSON: appends one JSON line {broker, round, scenario, ...}.
record() {
    local broker=$1 round=$2 scenario=$3 json=${4:-}
    # A run that printed nothing keeps its row, marked failed, so the table says n/a.
    [[ -n "$json" ]] || json='{"failed": 1, "error": "no result"}'
    python3 -c '
import json, sys
try:
    d = json.loads(sys.argv[4].strip().splitlines()[-1])
except (ValueError, IndexError):
    d = {"failed": 1, "error": "unreadable output", "output": sys.argv[4][-200:]}
d.update(broker=sys.argv[1], round=int(sys.argv[2]), scenario=sys.argv[3])
d["load1"] = float(open("/proc/loadavg").read().split()[0])
if sys.argv[5]:
    d["broker_cpu_s"] = float(sys.argv[5])
print(json.dumps(d))' \
        "$broker" "$round" "$scenario" "$json" "$(cat "$work/broker_cpu" 2>/dev/null)" >>"$raw"
    rm -f "$work/broker_cpu"
}

# CPU seconds (user + system, all threads) the broker process has used so far; empty without one.
broker_cpu_s() {
    [[ -n "$broker_pid" ]] && alive "$broker_pid" || return 0
    awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$broker_pid/stat"
}
# run_measured LIMIT_S LABEL COMMAND...: runs a load client with a time limit and prints its
# stdout; the broker's CPU time during the run goes to $work/broker_cpu for record() to attach.
# Failures and timeouts go to failures.txt and stderr; the client's stderr goes to loadgen.log.
run_measured() {
    local limit=$1 label=$2 rc=0 out cpu_before cpu_after
    shift 2
    echo "== $label: $*" >>"$out_dir/loadgen.log"
    cpu_before=$(broker_cpu_s)
    out=$(timeout -k 10 "$limit" "$@" 2>>"$out_dir/loadgen.log") || rc=$?
    cpu_after=$(broker_cpu_s)
    if [[ -n "$cpu_before" && -n "$cpu_after" ]]; then
        awk -v a="$cpu_before" -v b="$cpu_after" 'BEGIN {printf "%.2f", b - a}' >"$work/broker_cpu"
    else
        rm -f "$work/broker_cpu"
    fi
    if ((rc == 124 || rc == 137)); then
        echo "$label: timed out after ${limit}s" | tee -a "$failures" >&2
    elif ((rc != 0)); then
        echo "$label: $(basename "$1") exited $rc (see loadgen.log)" | tee -a "$failures" >&2
    fi
    echo "$out"
}
# run_loadgen LIMIT_S LABEL ARGS...: spool-loadgen's JSON line.
run_loadgen() {
    local limit=$1 label=$2
    shift 2
    run_measured "$limit" "$label" "$loadgen_bin" "$@"
}
# Kafka's own tools (the Java client) from the cached Kafka distribution, with the heap Kafka's
# perf-test scripts give them.
java_tool=(java -Xmx512m -Xshare:auto -Dlog4j2.configurationFile="$root/tests/compat/java/log4j2.properties"
    -cp "$kafka_dir/libs/*")
# run_java_perf LIMIT_S LABEL produce|consume RECORD_SIZE TOOL_ARGS...: kafka-producer-perf-test
# (ProducerPerformance) or kafka-consumer-perf-test (ConsumerPerformance), its summary as JSON.
run_java_perf() {
    local limit=$1 label=$2 mode=$3 size=$4 class=org.apache.kafka.tools.ProducerPerformance
    shift 4
    [[ $mode == consume ]] && class=org.apache.kafka.tools.ConsumerPerformance
    run_measured "$limit" "$label" "${java_tool[@]}" "$class" "$@" |
        python3 bench/java_perf.py "$mode" "$size"
}
# java_create_topic TOPIC PARTITIONS: kafka-topics --create (the perf tools do not create topics).
java_create_topic() {
    timeout -k 10 120 "${java_tool[@]}" org.apache.kafka.tools.TopicCommand --bootstrap-server "$bootstrap" \
        --create --if-not-exists --topic "$1" --partitions "$2" --replication-factor 1 \
        >>"$out_dir/loadgen.log" 2>&1 || echo "create topic $1 with kafka-topics failed" | tee -a "$failures" >&2
}

# ---- machine limits, measured in the same run for context ----
machine_limits() {
    record machine 0 machine_info "$(python3 bench/report.py --describe-machine "$work")"
    local f=$work/ddtest mbps
    mbps=$(dd if=/dev/zero of="$f" bs=1M count=1024 conv=fdatasync 2>&1 | awk '/copied/ {print $(NF-1), $NF}')
    rm -f "$f"
    record machine 0 disk_seq_write "{\"value\":\"$mbps\"}"
    local port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    timeout 20 iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
    sleep 0.5
    local mb
    mb=$(timeout 20 iperf3 -c 127.0.0.1 -p "$port" -t 3 -J |
        python3 -c 'import json,sys; print(round(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]/8e6))') ||
        mb='"n/a"'
    record machine 0 loopback_tcp "{\"mb_per_s\":$mb}"
}

broker_pid=""
broker_kind=""
broker_dir=""
bootstrap=""
sampler_pid=""

# alive PID: the process runs and is not a zombie (a dead child of this shell stays a zombie).
alive() { [[ -r /proc/$1/stat ]] && [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

broker_log() { [[ $broker_kind == kafka ]] && echo "$broker_dir/kafka.log" || echo "$broker_dir/spool.log"; }

broker_failed() {
    local log
    log=$(broker_log)
    echo "---- last lines of $log ----" >&2
    tail -n 40 "$log" >&2 || true
    cp "$log" "$out_dir/logs/" 2>/dev/null || true
    die "$*"
}

# start_broker KIND ROUND: starts the broker and, at the same moment, a first-produce client that
# retries until its record is acknowledged (so the start-up measurement covers the same span for
# both brokers). Sets broker_pid, bootstrap. Dies when the broker does not come up.
start_broker() {
    broker_kind=$1
    local round=$2 port pid_file fp_pid
    broker_dir=$work/$broker_kind
    rm -rf "$broker_dir"
    mkdir -p "$broker_dir"
    port=$(free_port)
    pid_file=$broker_dir/broker.pid
    [[ $broker_kind == kafka ]] && pid_file=$broker_dir/kafka.pid
    echo "== $broker_kind round $round first_produce" >>"$out_dir/loadgen.log"
    # In its own process group, so a failed start can end it together with its children.
    setsid timeout -k 10 $first_produce_limit "$loadgen_bin" --mode first-produce \
        --bootstrap "127.0.0.1:$port" --topic first-produce --broker-pid-file "$pid_file" \
        --duration 90 >"$broker_dir/first_produce.json" 2>>"$out_dir/loadgen.log" &
    fp_pid=$!
    if [[ $broker_kind == kafka ]]; then
        if ! bootstrap=$(bash tests/fixtures/start-kafka.sh start --data-dir "$broker_dir" --port "$port"); then
            kill -TERM -- "-$fp_pid" 2>/dev/null || true
            broker_failed "Apache Kafka did not start (round $round)"
        fi
        broker_pid=$(cat "$pid_file")
        # The pid file must name the JVM itself, so RSS and start time are the broker's, not a
        # wrapper shell's.
        [[ $(cat "/proc/$broker_pid/comm") == java ]] ||
            broker_failed "Kafka pid $broker_pid is $(cat "/proc/$broker_pid/comm"), not the JVM"
    else
        "$spool_bin" --override listeners=PLAINTEXT://127.0.0.1:$port \
            --override log.dirs="$broker_dir/logs" --override http.listener=127.0.0.1:0 \
            >"$broker_dir/spool.log" 2>&1 &
        broker_pid=$!
        echo "$broker_pid" >"$pid_file"
        bootstrap=127.0.0.1:$port
        local deadline=$((SECONDS + 30))
        until (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
            alive "$broker_pid" || { kill -TERM -- "-$fp_pid" 2>/dev/null || true; broker_failed "spool-broker exited during start (round $round)"; }
            ((SECONDS < deadline)) || { kill -TERM -- "-$fp_pid" 2>/dev/null || true; broker_failed "spool-broker did not listen within 30 s (round $round)"; }
            sleep 0.02
        done
    fi
    if ! wait "$fp_pid"; then
        echo "$broker_kind round $round first_produce: failed (see loadgen.log)" | tee -a "$failures" >&2
    fi
    record "$broker_kind" "$round" first_produce "$(cat "$broker_dir/first_produce.json")"
}

stop_broker() {
    [[ -n "$broker_pid" ]] || return 0
    [[ -z "$sampler_pid" ]] || { kill "$sampler_pid" 2>/dev/null || true; wait "$sampler_pid" 2>/dev/null || true; sampler_pid=""; }
    if [[ $broker_kind == kafka ]]; then
        bash tests/fixtures/start-kafka.sh stop --data-dir "$broker_dir" >/dev/null 2>&1 || true
    else
        kill -TERM "$broker_pid" 2>/dev/null || true
        local i=0
        while alive "$broker_pid" && ((i++ < 300)); do sleep 0.1; done
        alive "$broker_pid" && say "spool-broker ignored SIGTERM for 30 s: killing it"
        kill -KILL "$broker_pid" 2>/dev/null || true
        wait "$broker_pid" 2>/dev/null || true
    fi
    broker_pid=""
    # The logs stay with the results; the data (several GiB per round) does not.
    cp "$(broker_log)" "$out_dir/logs/$broker_kind-$(date +%H%M%S).log" 2>/dev/null || true
    rm -rf "$broker_dir"
}
cleanup() {
    stop_broker || true
    rm -rf "$work"
}
trap cleanup EXIT

check_alive() {
    alive "$broker_pid" || broker_failed "$broker_kind died during the round (after $1)"
}

rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# Samples the broker's resident memory every 200 ms until stopped; keeps the peak in a file.
rss_sampler_start() {
    echo 0 >"$work/rss_peak"
    (
        peak=0
        while alive "$broker_pid"; do
            r=$(rss_kib "$broker_pid")
            if ((r > peak)); then peak=$r && echo "$peak" >"$work/rss_peak"; fi
            sleep 0.2
        done
    ) &
    sampler_pid=$!
}

# The scenarios every broker runs; the mock cluster runs the produce and consume ones in-process.
produce_scenarios() {
    local size acks parts
    for size in 100 1024; do
        for acks in 1 -1; do
            for parts in 1 6; do echo "$size $acks $parts"; done
        done
    done
}
records_for() { (($1 == 100)) && echo "$small_records" || echo "$big_records"; }

run_mock_round() {
    local round=$1 size acks parts
    while read -r size acks parts; do
        record mock "$round" "produce_${size}B_acks${acks}_p${parts}" "$(run_loadgen $produce_limit \
            "mock round $round produce_${size}B_acks${acks}_p${parts}" --mode produce --mock \
            --partitions "$parts" --record-size "$size" --records "$(records_for "$size")" --acks "$acks")"
    done < <(produce_scenarios)
    for size in 100 1024; do
        for ((pass = 1; pass <= client_bound_passes; pass++)); do
            record mock "$round" "consume_${size}B_p6" "$(run_loadgen $consume_limit \
                "mock round $round consume_${size}B_p6 pass $pass" --mode consume --mock --partitions 6 \
                --record-size "$size" --records "$(records_for "$size")" "${consumer_settings[@]}")"
        done
    done
}

# drop_topic TOPIC: deletes a produce scenario's topic once measured (all but the acks=1,
# 6-partition ones the consume scenarios read), so one broker's round (~25 GB written with the
# default-settings and Java rows) does not fill the disk. Both brokers drop the same topics at the
# same points; Kafka removes the files after log.segment.delete.delay.ms (60 s, its default).
drop_topic() {
    [[ $1 =~ ^p(100|1024)a1p6$ ]] && return 0
    run_loadgen 90 "drop $1" --mode delete-topic --bootstrap "$bootstrap" --topic "$1" >/dev/null
}

run_broker_round() {
    local kind=$1 round=$2 size acks parts topic scenario
    start_broker "$kind" "$round"
    sleep 3
    record "$kind" "$round" rss_idle "{\"kib\":$(rss_kib "$broker_pid")}"
    rss_sampler_start
    # Unrecorded warm-up (JIT for Kafka, first segments and page cache for both), so the first
    # measured scenario does not pay for it.
    run_loadgen $produce_limit "$kind round $round warm-up" --mode produce --bootstrap "$bootstrap" \
        --topic warmup --partitions 6 --record-size 1024 --records $((big_records / 5)) --acks 1 >/dev/null
    run_loadgen $produce_limit "$kind round $round warm-up" --mode produce --bootstrap "$bootstrap" \
        --topic warmup --partitions 6 --record-size 100 --records $((small_records / 5)) --acks 1 >/dev/null
    while read -r size acks parts; do
        scenario=produce_${size}B_acks${acks}_p${parts}
        topic=p${size}a${acks/-1/all}p${parts}
        record "$kind" "$round" "$scenario" "$(run_loadgen $produce_limit "$kind round $round $scenario" \
            --mode produce --bootstrap "$bootstrap" --topic "$topic" --partitions "$parts" \
            --record-size "$size" --records "$(records_for "$size")" --acks "$acks")"
        check_alive "$scenario"
        drop_topic "$topic"
    done < <(produce_scenarios)
    # The same with each client's default settings (what users run): librdkafka's own (the
    # "_default" rows) and Kafka's kafka-producer-perf-test with the Java client's ("_java").
    while read -r size acks parts; do
        scenario=produce_${size}B_acks${acks}_p${parts}_default
        topic=p${size}a${acks/-1/all}p${parts}d
        record "$kind" "$round" "$scenario" "$(run_loadgen $produce_limit "$kind round $round $scenario" \
            --mode produce --bootstrap "$bootstrap" --topic "$topic" --partitions "$parts" \
            --record-size "$size" --records "$(records_for "$size")" --acks "$acks" --client-defaults)"
        check_alive "$scenario"
        drop_topic "$topic"
        scenario=produce_${size}B_acks${acks}_p${parts}_java
        topic=p${size}a${acks/-1/all}p${parts}j
        java_create_topic "$topic" "$parts"
        record "$kind" "$round" "$scenario" "$(run_java_perf $produce_limit "$kind round $round $scenario" \
            produce "$size" --topic "$topic" --num-records "$(records_for "$size")" --record-size "$size" \
            --throughput -1 --producer-props "bootstrap.servers=$bootstrap" "acks=$acks")"
        check_alive "$scenario"
        drop_topic "$topic"
    done < <(produce_scenarios)
    # Reads back what the acks=1, 6-partition produce scenario wrote: tuned, with librdkafka's
    # defaults, and with kafka-consumer-perf-test (the Java client in a consumer group).
    for size in 100 1024; do
        for ((pass = 1; pass <= client_bound_passes; pass++)); do
            scenario=consume_${size}B_p6
            record "$kind" "$round" "$scenario" "$(run_loadgen $consume_limit \
                "$kind round $round $scenario pass $pass" --mode consume --bootstrap "$bootstrap" \
                --topic "p${size}a1p6" --partitions 6 --record-size "$size" \
                --records "$(records_for "$size")" "${consumer_settings[@]}")"
            check_alive "$scenario"
            scenario=consume_${size}B_p6_default
            record "$kind" "$round" "$scenario" "$(run_loadgen $consume_limit \
                "$kind round $round $scenario pass $pass" --mode consume --bootstrap "$bootstrap" \
                --topic "p${size}a1p6" --partitions 6 --record-size "$size" \
                --records "$(records_for "$size")" --client-defaults)"
            check_alive "$scenario"
            scenario=consume_${size}B_p6_java
            record "$kind" "$round" "$scenario" "$(run_java_perf $consume_limit \
                "$kind round $round $scenario pass $pass" consume "$size" --bootstrap-server "$bootstrap" \
                --topic "p${size}a1p6" --messages "$(records_for "$size")" --timeout 60000 \
                --group "perf-$kind-$round-$size-$pass" --hide-header)"
            check_alive "$scenario"
        done
    done
    for rate in 5 50; do
        scenario=latency_${rate}MBps
        record "$kind" "$round" "$scenario" "$(run_loadgen $latency_limit "$kind round $round $scenario" \
            --mode latency --bootstrap "$bootstrap" --topic "lat$rate" --partitions 1 \
            --record-size 1024 --rate-mb $rate --duration "$latency_s" --acks 1 -X linger.ms=0)"
        check_alive "$scenario"
    done
    record "$kind" "$round" rss_load "{\"kib\":$(cat "$work/rss_peak")}"
    stop_broker
}

kinds=()
for kind in kafka spool mock; do
    if [[ -z "$only" || "$only" == "$kind" ]]; then kinds+=("$kind"); fi
done

# Up-front estimate from the data volume at conservative rates (Kafka ~250 MB/s, Spool ~500 MB/s,
# mock ~400 MB/s produce; ~500 MB/s consume on 2 cores) plus fixed costs; the runner prints a
# projection from measured round times as it goes.
estimate_s() {
    awk -v small="$small_records" -v big="$big_records" -v lat="$latency_s" -v rounds="$rounds" \
        -v passes="$client_bound_passes" -v kinds="${kinds[*]}" 'BEGIN {
        mb = (4 * small * 100 + 4 * big * 1024) / 1e6; cmb = (small * 100 + big * 1024) / 1e6
        n = split(kinds, k, " ")
        for (i = 1; i <= n; i++) {
            if (k[i] == "kafka") per += 12 + 1.1 * mb / 250 + passes * (cmb / 500 + 1) + 2 * (lat + 5) + 3 + 10
            if (k[i] == "spool") per += 2 + 1.1 * mb / 500 + passes * (cmb / 500 + 1) + 2 * (lat + 5) + 3 + 2
            if (k[i] == "mock") per += mb / 400 + passes * (cmb / 500 + 1) + 10 * 0.5 + 2
        }
        printf "%d", 15 + rounds * per
    }'
}
est=$(estimate_s)
say "$rounds round(s) of: ${kinds[*]}; estimated wall time (after setup and build) $((est / 60)) min $((est % 60)) s" \
    "(finishes about $(date -d "+$est seconds" +%H:%M)); results in $out_dir"

# Wall time counts the benchmark itself, not package setup or the build before it.
wall_start=$SECONDS
machine_limits
for ((round = 1; round <= rounds; round++)); do
    round_start=$SECONDS
    for kind in "${kinds[@]}"; do
        say "round $round/$rounds: $kind"
        if [[ $kind == mock ]]; then run_mock_round "$round"; else run_broker_round "$kind" "$round"; fi
    done
    took=$((SECONDS - round_start))
    left=$(((rounds - round) * took))
    say "round $round took $took s; about $((left / 60)) min $((left % 60)) s to go"
done

wall_s=$((SECONDS - wall_start))
kafka_version=$(basename "$kafka_dir" | sed 's/^kafka-//')
librdkafka_version=$(pkg-config --modversion rdkafka 2>/dev/null || echo "?")
record machine 0 run_info "$(python3 -c 'import json,sys; print(json.dumps(dict(command=sys.argv[1], date=sys.argv[2], wall_s=int(sys.argv[3]), quick=bool(int(sys.argv[4])), kafka_version=sys.argv[5], librdkafka=sys.argv[6], kafka_heap=sys.argv[7], failures=int(sys.argv[8]), client_bound_passes=int(sys.argv[9]))))' \
    "$command_line" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$wall_s" "$quick" "$kafka_version" \
    "$librdkafka_version" "${KAFKA_HEAP_OPTS:--Xms1g -Xmx1g}" "$(wc -l <"$failures")" "$client_bound_passes")"

# Only a full run (all three, at least 3 rounds, full sizes) replaces the published table.
publish=$((!quick && ${#kinds[@]} == 3 && rounds >= 3))
report_args=()
if ((publish && readme)); then report_args+=(--readme README.md); fi
python3 bench/report.py "$raw" "${report_args[@]}" >"$out_dir/results.md"
if ((publish)); then
    cp "$out_dir/results.md" bench/results/latest.md
    say "wrote bench/results/latest.md$(((readme)) && echo " and the table in README.md")"
else
    say "smoke, partial or short run: bench/results/latest.md and README.md left as they are"
fi
cat "$out_dir/results.md"
# Key rows into bench/results/history.tsv (bench/history.py show prints them per commit).
if ((!quick)); then
    python3 bench/history.py append --source run "$raw" \
        latency_5MBps:p50_us:lower latency_5MBps:p99_us:lower latency_5MBps:p999_us:lower \
        latency_50MBps:p99_us:lower latency_50MBps:p999_us:lower \
        consume_100B_p6_default:mb_per_s produce_100B_acks1_p6:mb_per_s
fi
say "wall time $((wall_s / 60)) min $((wall_s % 60)) s (estimated $((est / 60)) min $((est % 60)) s); results in $out_dir"
if [[ -s "$failures" ]]; then
    say "$(wc -l <"$failures") scenario run(s) failed or timed out:"
    cat "$failures" >&2
    exit 1
fi
