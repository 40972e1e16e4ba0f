#!/usr/bin/env bash
# Replicated benchmark (#16): three spool-brokers on one etcd against Apache Kafka 4.x with three
# KRaft nodes (each broker and controller, the smallest highly available KRaft cluster), on this
# machine, driven by the same spool-loadgen (librdkafka), in alternation (Kafka, Spool, Kafka, ...)
# for --rounds rounds (default 3). Every topic has replication factor 3 and min.insync.replicas=2,
# and every producer uses acks=all.
#
# Scenarios per round and cluster:
#   produce_1024B_p6      tuned producer (the loadgen's settings), 6 partitions
#   produce_1024B_p6_default  librdkafka's default settings (what users run)
#   produce_100B_p6       tuned, 100-byte records
#   latency_5MBps         1 partition, 5 MB/s offered, linger.ms=0: produce latency (send to
#                         acknowledgement, i.e. replication included) and end-to-end p50/p99/p99.9
#   catchup               the last broker stops (SIGTERM) for --down seconds (default 60) while a
#                         producer offers 10 MB/s; then it restarts: seconds from its restart until
#                         it is back in the ISR of every partition, and the rate that makes
#   failover              1 partition, 1 MB/s offered (1 KiB records, linger.ms=0), acks=all: the
#                         partition's leader is killed -9 8 s in; the producer's stall (the longest
#                         time between two acknowledgements) and the slowest acknowledgement
#   first_read_100B_p1    issue #36: 1 partition, 100-byte records written by the tuned producer
#                         (acks=all), then read at once by librdkafka's default consumer
#                         (--client-defaults): the first pass over just-produced data; then
#   second_read_100B_p1   the same records read again by a new default consumer
#   first_read_100B_p1_deepq  as first_read_100B_p1 on a new topic, the consumer with
#                         queued.min.messages=10000000 and queued.max.messages.kbytes=2097151
#                         (librdkafka's queue back-off out of the way: what the broker delivers)
# Broker CPU seconds (all three brokers, and etcd on its own row for Spool) and the peak of the
# three brokers' summed RSS come with the results.
#
#   bench/replicated.sh [--rounds N] [--quick] [--down S] [--skip-setup] [--brokers 1|3] [--security]
#                       [--only SCENARIO] [--spool-override KEY=VALUE]... [--clusters "kafka spool"]
#
# --only failover|first_read: just that scenario each round (the others: produce_1024B_p6 ...,
# catchup). --brokers 1 --only first_read gives the single-broker (RF=1) first-read rows.
# --spool-override: an extra broker setting for every spool-broker (e.g.
# spool.dead.broker.probe.enable=false, the failover before issue #36). --clusters: which to run.
#
# Results: bench/results/<stamp>-replicated/{raw.jsonl,results.md,logs/}; a full (not --quick,
# not --security) run appends its key rows' medians to bench/results/history.tsv (bench/history.py). --quick shrinks every
# scenario (and --down to 10 s) for a smoke run. Fails loudly when a cluster does not start.
#
# --security: the TLS rows instead (bench/security.sh): every broker gets a SASL_SSL listener
# (SCRAM-SHA-512, one PKI for Kafka and Spool) beside its PLAINTEXT one, and each round measures
# on the same cluster, plaintext and SASL_SSL in alternating order:
#   produce_1024B_p6[_tls]  tuned producer, acks=all, 6 partitions
#   consume_1024B_p6[_tls]  reads back what that produce wrote
#   latency_5MBps[_tls]     as above (acks=all)
# with each scenario's broker CPU. --brokers 1: one broker (RF=1, min.insync.replicas=1) and one
# KRaft node, for the single-broker rows. Results: bench/results/<stamp>-tls-<N>broker(s)/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
command_line="bench/replicated.sh${*:+ $*}"
export BENCH_COMMIT=${BENCH_COMMIT:-$(python3 bench/history.py commit)}  # for bench/results/history.tsv

rounds=3 quick=0 skip_setup=0 down_s="" brokers=3 security=0 only="" spool_overrides=() clusters="kafka spool"
while (($#)); do
    case $1 in
        --only) only=$2; shift 2 ;;
        --spool-override) spool_overrides+=(--override "$2"); shift 2 ;;
        --clusters) clusters=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --down) down_s=$2; shift 2 ;;
        --skip-setup) skip_setup=1; shift ;;
        --brokers) brokers=$2; shift 2 ;;
        --security) security=1; shift ;;
        *) echo "bench/replicated.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[[ -z "$only" || $only == failover || $only == first_read ]] ||
    { echo "bench/replicated.sh: --only failover or first_read" >&2; exit 2; }
((rounds >= 1)) || { echo "bench/replicated.sh: --rounds must be at least 1" >&2; exit 2; }
[[ $brokers == 1 || $brokers == 3 ]] || { echo "bench/replicated.sh: --brokers 1 or 3" >&2; exit 2; }
rf=$((brokers == 1 ? 1 : 3)) min_isr=$((brokers == 1 ? 1 : 2))

say() { echo "bench: $*" >&2; }
die() {
    echo "bench: FATAL: $*" >&2
    exit 1
}

if ((!skip_setup)); then
    bash scripts/setup.sh --with-tests
    bash scripts/setup.sh --bench
fi
command -v etcd >/dev/null || die "etcd is missing (scripts/setup.sh --with-tests installs etcd-server)"
command -v kcat >/dev/null || die "kcat is missing (scripts/setup.sh --with-tests installs it)"
build_dir=${SPOOL_BENCH_BUILD_DIR:-build/release}
if [[ -z "${SPOOL_BENCH_SPOOL_BIN:-}" || -z "${SPOOL_BENCH_LOADGEN_BIN:-}" ]]; then
    cmake --preset release -B "$build_dir" >/dev/null
    cmake --build "$build_dir" --target spool-broker spool-loadgen
fi
loadgen_bin=$(realpath "${SPOOL_BENCH_LOADGEN_BIN:-$build_dir/bench/loadgen/spool-loadgen}")
spool_bin=$(realpath "${SPOOL_BENCH_SPOOL_BIN:-$build_dir/broker/app/spool-broker}")
[[ -x "$loadgen_bin" && -x "$spool_bin" ]] || die "missing $loadgen_bin or $spool_bin"
kafka_dir=$(bash scripts/peers/fetch-kafka.sh --jars-only)  # no Java checker: SPOOL_KAFKA_VERSION=4.4.0 works too

if ((quick)); then
    small_records=300000 big_records=100000 latency_s=5 down_s=${down_s:-10} first_read_records=300000
else
    small_records=2000000 big_records=500000 latency_s=15 down_s=${down_s:-60} first_read_records=3000000
fi
catchup_rate_mb=10
# --security: 1 GiB per produce scenario (long enough that TLS set-up is noise), read back whole.
tls_records=$((quick ? 100000 : 1000000))
produce_limit=240 latency_limit=$((latency_s + 60))

stamp=$(date -u +%Y%m%dT%H%M%SZ)
out_dir=$root/bench/results/$stamp-replicated
if ((security)); then
    out_dir=$root/bench/results/$stamp-tls-${brokers}broker$( ((brokers == 1)) || echo s)
fi
work=$(mktemp -d /tmp/spool-bench-rf3.XXXXXX)
mkdir -p "$out_dir/logs" "$work/pki"
raw=$out_dir/raw.jsonl
source bench/security.sh
sasl_ssl_args=() loadgen_env=()
if ((security)); then
    command -v openssl >/dev/null || die "openssl is missing (scripts/setup.sh --with-tests)"
    bench_pki "$work/pki" || die "openssl could not make the benchmark's certificates"
    bench_librdkafka_dir "$work/librdkafka" || die "no librdkafka in the confluent-kafka venv (scripts/peers/fetch-python.sh)"
    loadgen_env=(env LD_LIBRARY_PATH="$work/librdkafka")
    read -ra sasl_ssl_args <<<"$(bench_sasl_ssl_args "$work/pki" | tr '\n' ' ')"
    security_overrides=()
    while read -r kv; do security_overrides+=(--override "$kv"); done < <(bench_security_overrides "$work/pki")
fi
failures=$out_dir/failures.txt
: >"$failures"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
alive() { [[ -r /proc/$1/stat ]] && [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]; }
cpu_of() { alive "$1" && awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$1/stat" || echo 0; }
rss_of() {
    local kib
    kib=$(awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null) || true
    echo "${kib:-0}"
}

# The cluster now running: its kind, each broker's pid, port and data dir; etcd's pid for Spool.
kind="" pids=() ports=() dirs=() etcd_pid="" etcd_endpoint="" bootstrap="" sampler_pid=""
sasl_ports=() bootstrap_tls=""
nodes() { seq 0 $((brokers - 1)); }
# join_bootstrap PORT...: localhost:P1,localhost:P2,...
join_bootstrap() { printf 'localhost:%s\n' "$@" | paste -sd, -; }
# The listener overrides of node I with --security (a SASL_SSL listener on sasl_ports[I]).
security_listeners() { # security_listeners I KAFKA_CONTROLLER_PORT(or empty)
    ((security)) || return 0
    local i=$1 controller=${2:+,CONTROLLER://localhost:$2}
    local map="PLAINTEXT:PLAINTEXT,SASL_SSL:SASL_SSL${controller:+,CONTROLLER:PLAINTEXT}"
    printf '%s\n' --override "listeners=PLAINTEXT://localhost:${ports[i]}$controller,SASL_SSL://localhost:${sasl_ports[i]}" \
        --override "advertised.listeners=PLAINTEXT://localhost:${ports[i]},SASL_SSL://localhost:${sasl_ports[i]}" \
        --override "listener.security.protocol.map=$map" "${security_overrides[@]}"
}
kafka_voters="" kafka_cluster_id="" controller_ports=()

brokers_cpu() {
    local sum=0 p
    for p in "${pids[@]}"; do sum=$(awk -v a="$sum" -v b="$(cpu_of "$p")" 'BEGIN {printf "%.2f", a + b}'); done
    echo "$sum"
}

# record ROUND SCENARIO JSON [CPU_BEFORE ETCD_CPU_BEFORE]: one JSON line {cluster, round, scenario,
# ..., broker_cpu_s, etcd_cpu_s}.
record() {
    local round=$1 scenario=$2 json=${3:-} cpu="" etcd_cpu=""
    [[ -n "$json" ]] || json='{"failed": 1, "error": "no result"}'
    if [[ -n "${4:-}" ]]; then
        cpu=$(awk -v a="$4" -v b="$(brokers_cpu)" 'BEGIN {printf "%.2f", b - a}')
        [[ -z "$etcd_pid" ]] || etcd_cpu=$(awk -v a="$5" -v b="$(cpu_of "$etcd_pid")" 'BEGIN {printf "%.2f", b - a}')
    fi
    python3 -c '
import json, sys
try:
    d = json.loads(sys.argv[4].strip().splitlines()[-1])
except (ValueError, IndexError):
    d = {"failed": 1, "error": "unreadable output", "output": sys.argv[4][-200:]}
d.update(cluster=sys.argv[1], round=int(sys.argv[2]), scenario=sys.argv[3])
d["load1"] = float(open("/proc/loadavg").read().split()[0])
if sys.argv[5]:
    d["broker_cpu_s"] = float(sys.argv[5])
if sys.argv[6]:
    d["etcd_cpu_s"] = float(sys.argv[6])
print(json.dumps(d))' "$kind" "$round" "$scenario" "$json" "$cpu" "$etcd_cpu" >>"$raw"
}

# run_loadgen ROUND SCENARIO LIMIT ARGS...: one measured loadgen run, recorded with the CPU the
# brokers (and etcd) spent during it.
run_loadgen() {
    local round=$1 scenario=$2 limit=$3 rc=0 out cpu0 etcd0=0
    shift 3
    echo "== $kind round $round $scenario: $*" >>"$out_dir/loadgen.log"
    cpu0=$(brokers_cpu)
    [[ -z "$etcd_pid" ]] || etcd0=$(cpu_of "$etcd_pid")
    out=$(timeout -k 10 "$limit" "${loadgen_env[@]}" "$loadgen_bin" --bootstrap "$bootstrap" --replication-factor $rf "$@" \
        2>>"$out_dir/loadgen.log") || rc=$?
    ((rc == 0)) || echo "$kind round $round $scenario: spool-loadgen exited $rc" | tee -a "$failures" >&2
    record "$round" "$scenario" "$out" "$cpu0" "$etcd0"
}

# ---- Kafka: three KRaft nodes, each broker and controller ----
kafka_node() { # kafka_node I [--no-wait]: starts (or restarts) node I (1-based node id I+1)
    local i=$1 extra=()
    shift
    mapfile -t extra < <(security_listeners "$i" "${controller_ports[i]}")
    bash tests/fixtures/start-kafka.sh start --data-dir "${dirs[i]}" --port "${ports[i]}" \
        --controller-port "${controller_ports[i]}" --node-id $((i + 1)) --voters "$kafka_voters" \
        --cluster-id "$kafka_cluster_id" "$@" \
        --override offsets.topic.replication.factor=$rf --override min.insync.replicas=$min_isr \
        --override default.replication.factor=$rf \
        --override transaction.state.log.replication.factor=$rf --override transaction.state.log.min.isr=$min_isr \
        "${extra[@]}" >/dev/null
}
start_kafka() {
    kind=kafka pids=() ports=() dirs=() controller_ports=() etcd_pid=""
    kafka_cluster_id=$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=' | sed 's/^-/A/')
    local i voters=()
    sasl_ports=()
    for i in $(nodes); do
        ports+=("$(free_port)")
        sasl_ports+=("$(free_port)")
        controller_ports+=("$(free_port)")
        dirs+=("$work/kafka-$i")
        voters+=("$((i + 1))@localhost:${controller_ports[i]}")
    done
    kafka_voters=$(IFS=,; echo "${voters[*]}")
    for i in $(nodes); do kafka_node "$i" --no-wait || die "Kafka node $i did not start"; done
    for i in $(nodes); do
        bash tests/fixtures/start-kafka.sh wait --data-dir "${dirs[i]}" >/dev/null ||
            die "Kafka node $i did not come up (log ${dirs[i]}/kafka.log)"
        pids+=("$(cat "${dirs[i]}/kafka.pid")")
    done
    bootstrap=$(join_bootstrap "${ports[@]}") bootstrap_tls=$(join_bootstrap "${sasl_ports[@]}")
}
stop_kafka_node() {
    bash tests/fixtures/start-kafka.sh stop --data-dir "${dirs[$1]}" >/dev/null 2>&1 || true
}

# ---- Spool: one etcd and three spool-brokers ----
spool_node() { # spool_node I: starts (or restarts) broker I on its port and data dir
    local i=$1 extra=()
    mapfile -t extra < <(security_listeners "$i")
    "$spool_bin" --override node.id="$i" --override listeners=PLAINTEXT://localhost:"${ports[i]}" \
        --override http.listener=127.0.0.1:0 --override log.dirs="${dirs[i]}" \
        --override metadata.store=etcd --override etcd.endpoints="$etcd_endpoint" \
        --override etcd.prefix=/spool/bench --override offsets.topic.replication.factor=$rf \
        --override min.insync.replicas=$min_isr --override default.replication.factor=$rf \
        "${extra[@]}" "${spool_overrides[@]}" >>"${dirs[i]}.log" 2>&1 &
    pids[i]=$!
    local deadline=$((SECONDS + 30))
    until port_open "${ports[i]}"; do
        alive "${pids[i]}" || { tail -n 30 "${dirs[i]}.log" >&2; die "spool-broker $i exited during start"; }
        ((SECONDS < deadline)) || die "spool-broker $i did not listen within 30 s"
        sleep 0.05
    done
}
start_spool() {
    kind=spool pids=() ports=() dirs=()
    local client peer i
    client=$(free_port) peer=$(free_port)
    etcd_endpoint=http://127.0.0.1:$client
    etcd --name bench --data-dir "$work/etcd" --listen-client-urls "$etcd_endpoint" \
        --advertise-client-urls "$etcd_endpoint" --listen-peer-urls "http://127.0.0.1:$peer" \
        --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
        --initial-cluster "bench=http://127.0.0.1:$peer" >"$work/etcd.log" 2>&1 &
    etcd_pid=$!
    for _ in $(seq 100); do
        curl -fsS "$etcd_endpoint/health" 2>/dev/null | grep -q true && break
        sleep 0.1
    done
    curl -fsS "$etcd_endpoint/health" 2>/dev/null | grep -q true || die "etcd did not start"
    sasl_ports=()
    for i in $(nodes); do
        ports+=("$(free_port)")
        sasl_ports+=("$(free_port)")
        dirs+=("$work/spool-$i")
        mkdir -p "${dirs[i]}"
    done
    for i in $(nodes); do spool_node "$i"; done
    bootstrap=$(join_bootstrap "${ports[@]}") bootstrap_tls=$(join_bootstrap "${sasl_ports[@]}")
}
stop_spool_node() {
    local pid=${pids[$1]} n=0
    kill -TERM "$pid" 2>/dev/null || true
    while alive "$pid" && ((n++ < 300)); do sleep 0.1; done
    alive "$pid" && { say "spool-broker $1 ignored SIGTERM for 30 s: killing it"; kill -KILL "$pid"; }
    wait "$pid" 2>/dev/null || true
}

stop_cluster() {
    [[ -z "$sampler_pid" ]] || { kill "$sampler_pid" 2>/dev/null || true; wait "$sampler_pid" 2>/dev/null || true; sampler_pid=""; }
    [[ -n "$kind" ]] || return 0
    local i
    for i in "${!dirs[@]}"; do
        if [[ $kind == kafka ]]; then
            cp "${dirs[i]}/kafka.log" "$out_dir/logs/kafka-$i-$(date +%H%M%S).log" 2>/dev/null || true
            stop_kafka_node "$i"
        else
            stop_spool_node "$i"
            cp "${dirs[i]}.log" "$out_dir/logs/spool-$i-$(date +%H%M%S).log" 2>/dev/null || true
        fi
    done
    if [[ -n "$etcd_pid" ]]; then
        kill -TERM "$etcd_pid" 2>/dev/null || true
        wait "$etcd_pid" 2>/dev/null || true
    fi
    rm -rf "$work"/kafka-* "$work"/spool-* "$work/etcd" "$work"/*.log
    kind="" etcd_pid=""
}
trap 'stop_cluster; rm -rf "$work"' EXIT

# The peak of the three brokers' summed RSS, sampled every 200 ms into $work/rss_peak.
rss_sampler_start() {
    echo 0 >"$work/rss_peak"
    local watched=("${pids[@]}")
    (
        peak=0
        while true; do
            sum=0
            for p in "${watched[@]}"; do sum=$((sum + $(rss_of "$p"))); done
            if ((sum > peak)); then peak=$sum && echo "$peak" >"$work/rss_peak"; fi
            sleep 0.2
        done
    ) &
    sampler_pid=$!
}

# isr_complete TOPIC NODE: true when NODE is in the ISR of every partition of TOPIC (kcat -L).
isr_complete() {
    kcat -b "$bootstrap" -L -J -t "$1" -m 5 2>/dev/null | python3 -c '
import json, sys
node = int(sys.argv[1])
try:
    t = json.load(sys.stdin)["topics"][0]
except (ValueError, KeyError, IndexError):
    sys.exit(1)
parts = t.get("partitions", [])
ok = parts and all(any(i["id"] == node for i in p.get("isrs", [])) for p in parts)
sys.exit(0 if ok else 1)' "$2"
}

# The last broker is stopped while a producer offers catchup_rate_mb MB/s for down_s seconds, then
# restarted: how long from its restart until it is in every partition's ISR again.
catchup() {
    local round=$1 last=2 node t0 t1 cpu0 etcd0=0 out rc=0
    node=$([[ $kind == kafka ]] && echo 3 || echo 2)
    # The topic first, with every replica in sync, so the stop is the only thing missing.
    timeout 60 "$loadgen_bin" --bootstrap "$bootstrap" --replication-factor 3 --mode produce \
        --topic catchup --partitions 6 --record-size 1024 --records 1000 --acks -1 >/dev/null 2>>"$out_dir/loadgen.log" ||
        echo "$kind round $round catchup: topic set-up failed" | tee -a "$failures" >&2
    if [[ $kind == kafka ]]; then stop_kafka_node $last; else stop_spool_node $last; fi
    echo "== $kind round $round catchup: broker $node down for $down_s s" >>"$out_dir/loadgen.log"
    out=$(timeout -k 10 $((down_s + 60)) "$loadgen_bin" --bootstrap "$bootstrap" --replication-factor 3 \
        --mode latency --topic catchup --partitions 6 --record-size 1024 --acks -1 \
        --rate-mb "$catchup_rate_mb" --duration "$down_s" 2>>"$out_dir/loadgen.log") || rc=$?
    ((rc == 0)) || echo "$kind round $round catchup: producer exited $rc" | tee -a "$failures" >&2
    cpu0=$(brokers_cpu)
    [[ -z "$etcd_pid" ]] || etcd0=$(cpu_of "$etcd_pid")
    t0=$(date +%s.%N)
    if [[ $kind == kafka ]]; then
        kafka_node $last || die "Kafka node $last did not restart"
        pids[last]=$(cat "${dirs[last]}/kafka.pid")
    else
        spool_node $last
    fi
    local deadline=$((SECONDS + 300)) caught=0
    while ((SECONDS < deadline)); do
        if isr_complete catchup "$node"; then caught=1 && break; fi
        sleep 0.2
    done
    t1=$(date +%s.%N)
    # What the stopped broker missed: the offered load over the downtime (plus the 2 s warm-up
    # the latency mode adds before it samples).
    local missed_mb=$(((down_s + 2) * catchup_rate_mb))
    if ((caught)); then
        record "$round" catchup "$(python3 -c 'import json,sys; s=float(sys.argv[2])-float(sys.argv[1]); print(json.dumps(dict(seconds=round(s,2), missed_mb=int(sys.argv[3]), mb_per_s=round(int(sys.argv[3])/s,1), down_s=int(sys.argv[4]))))' "$t0" "$t1" "$missed_mb" "$down_s")" "$cpu0" "$etcd0"
    else
        echo "$kind round $round catchup: broker $node not back in the ISR within 300 s" | tee -a "$failures" >&2
        record "$round" catchup '{"failed": 1, "error": "not back in the ISR within 300 s"}'
    fi
}

# A steady acks=all producer on one partition while its leader is killed -9 (8 s in, after the
# loadgen's 2 s warm-up): the producer's stall, the longest time between two acknowledgements.
# The last scenario of a round: the killed broker stays down until stop_cluster.
failover() {
    local round=$1 leader idx out rc=0 cpu0 etcd0=0 killer
    timeout 60 "$loadgen_bin" --bootstrap "$bootstrap" --replication-factor 3 --mode produce \
        --topic failover --partitions 1 --record-size 1024 --records 1000 --acks -1 >/dev/null 2>>"$out_dir/loadgen.log" ||
        echo "$kind round $round failover: topic set-up failed" | tee -a "$failures" >&2
    leader=$(kcat -b "$bootstrap" -L -J -t failover -m 5 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["topics"][0]["partitions"][0]["leader"])') || leader=""
    [[ -n "$leader" ]] || { echo "$kind round $round failover: no leader found" | tee -a "$failures" >&2; return; }
    idx=$([[ $kind == kafka ]] && echo $((leader - 1)) || echo "$leader")
    echo "== $kind round $round failover: kill -9 of node $leader (pid ${pids[idx]}) 8 s in" >>"$out_dir/loadgen.log"
    cpu0=$(brokers_cpu)
    [[ -z "$etcd_pid" ]] || etcd0=$(cpu_of "$etcd_pid")
    (sleep 8 && kill -KILL "${pids[idx]}") &
    killer=$!
    out=$(timeout -k 10 80 "$loadgen_bin" --bootstrap "$bootstrap" --replication-factor 3 \
        --mode latency --topic failover --partitions 1 --record-size 1024 --acks -1 \
        --rate-mb 1 --duration 20 -X linger.ms=0 2>>"$out_dir/loadgen.log") || rc=$?
    wait "$killer" 2>/dev/null || true
    ((rc == 0)) || echo "$kind round $round failover: producer exited $rc" | tee -a "$failures" >&2
    record "$round" failover "$out" "$cpu0" "$etcd0"
    [[ $kind == kafka ]] || wait "${pids[idx]}" 2>/dev/null || true
}

# first_read ROUND: issue #36's rows, each on a fresh topic: produce, then at once the default
# consumer's first pass, then a second pass with a new consumer (the loadgen's group does not
# commit, so each starts from the beginning). Both read the whole partition; the rate counts from
# the first record (first_record_ms is the consumer's start-up apart). Then the same with a
# consumer whose only change is a deep queue: librdkafka stops fetching a partition whose queue
# holds queued.min.messages (100,000 by default) or queued.max.messages.kbytes (64 MiB) and looks
# again only at its broker thread's next wake-up, up to 1 s later (fetch.queue.backoff.ms in
# librdkafka 2.4+). So whenever a broker delivers faster than the application drains, the default
# consumer stalls; each run reports those gaps ("stalls", "stall_ms"), and the deep-queue row is
# the read rate without them. DEBUG=1 adds librdkafka's debug=fetch to the reads (loadgen.log).
first_read() {
    local round=$1 topic suffix extra
    for suffix in "" _deepq; do
        topic=fr100$suffix extra=()
        [[ -z $suffix ]] || extra=(-C queued.min.messages=10000000 -C queued.max.messages.kbytes=2097151)
        run_loadgen "$round" "produce_100B_p1$suffix" $produce_limit --mode produce --topic "$topic" \
            --partitions 1 --record-size 100 --records "$first_read_records" --acks -1
        run_loadgen "$round" "first_read_100B_p1$suffix" $produce_limit --mode consume --topic "$topic" \
            --partitions 1 --record-size 100 --records "$first_read_records" --client-defaults \
            "${extra[@]}" ${DEBUG:+-C debug=fetch}
        [[ -n $suffix ]] || run_loadgen "$round" second_read_100B_p1 $produce_limit --mode consume \
            --topic "$topic" --partitions 1 --record-size 100 --records "$first_read_records" \
            --client-defaults ${DEBUG:+-C debug=fetch}
    done
}

# The --security round: the SCRAM user, a warm-up on each listener, then plaintext and SASL_SSL
# (alternating which goes first) on the same cluster.
security_scenarios() {
    local round=$1 plain_bootstrap=$bootstrap order suffix
    bench_create_scram_user "$kafka_dir" "$bootstrap" "$out_dir/loadgen.log" ||
        die "$kind: kafka-configs could not create the SCRAM-SHA-512 user (see loadgen.log)"
    sleep 2 # the credential reaches every broker through the metadata log / etcd
    for suffix in "" _tls; do
        tls_or_plain "$suffix" "$plain_bootstrap"
        timeout -k 10 $produce_limit "${loadgen_env[@]}" "$loadgen_bin" --bootstrap "$bootstrap" --replication-factor $rf \
            --mode produce --topic "warmup$suffix" --partitions 6 --record-size 1024 \
            --records $((tls_records / 5)) --acks -1 "${scenario_args[@]}" >/dev/null 2>>"$out_dir/loadgen.log" ||
            echo "$kind round $round warm-up$suffix failed" | tee -a "$failures" >&2
    done
    order=("" _tls)
    ((round % 2)) || order=(_tls "")
    for suffix in "${order[@]}"; do
        tls_or_plain "$suffix" "$plain_bootstrap"
        # What came before written out first, so each produce starts from the same page cache
        # state. (Spool with 3 brokers still runs the second produce of a round at about half the
        # rate, with twice the broker CPU, whichever listener it uses: the alternating order
        # balances that, the medians do not remove it.)
        sync
        run_loadgen "$round" "produce_1024B_p6$suffix" $produce_limit --mode produce --topic "p1024$suffix" \
            --partitions 6 --record-size 1024 --records "$tls_records" --acks -1 "${scenario_args[@]}"
        run_loadgen "$round" "consume_1024B_p6$suffix" $produce_limit --mode consume --topic "p1024$suffix" \
            --partitions 6 --record-size 1024 --records "$tls_records" "${scenario_args[@]}"
        run_loadgen "$round" "latency_5MBps$suffix" $latency_limit --mode latency --topic "lat5$suffix" \
            --partitions 1 --record-size 1024 --rate-mb 5 --duration "$latency_s" --acks -1 -X linger.ms=0 \
            "${scenario_args[@]}"
    done
    bootstrap=$plain_bootstrap
}
# tls_or_plain SUFFIX PLAIN_BOOTSTRAP: bootstrap and scenario_args for "" (PLAINTEXT) or _tls.
tls_or_plain() {
    if [[ $1 == _tls ]]; then
        bootstrap=$bootstrap_tls scenario_args=("${sasl_ssl_args[@]}")
    else
        bootstrap=$2 scenario_args=()
    fi
}

run_round() {
    local round=$1
    if [[ $kind == kafka ]]; then start_kafka; else start_spool; fi
    sleep 3
    local idle=0 p
    for p in "${pids[@]}"; do idle=$((idle + $(rss_of "$p"))); done
    record "$round" rss_idle "{\"kib\":$idle}"
    rss_sampler_start
    if ((security)); then
        security_scenarios "$round"
        record "$round" rss_load "{\"kib\":$(cat "$work/rss_peak")}"
        stop_cluster
        return
    fi
    if [[ -n $only ]]; then
        "$only" "$round"
        stop_cluster
        return
    fi
    # Unrecorded warm-up: JIT for Kafka, first segments for both, __consumer_offsets placed.
    timeout -k 10 $produce_limit "$loadgen_bin" --bootstrap "$bootstrap" --replication-factor 3 --mode produce \
        --topic warmup --partitions 6 --record-size 1024 --records $((big_records / 5)) --acks -1 \
        >/dev/null 2>>"$out_dir/loadgen.log" || echo "$kind round $round warm-up failed" | tee -a "$failures" >&2
    run_loadgen "$round" produce_1024B_p6 $produce_limit --mode produce --topic p1024 --partitions 6 \
        --record-size 1024 --records "$big_records" --acks -1
    run_loadgen "$round" produce_1024B_p6_default $produce_limit --mode produce --topic p1024d \
        --partitions 6 --record-size 1024 --records "$big_records" --acks -1 --client-defaults
    run_loadgen "$round" produce_100B_p6 $produce_limit --mode produce --topic p100 --partitions 6 \
        --record-size 100 --records "$small_records" --acks -1
    run_loadgen "$round" latency_5MBps $latency_limit --mode latency --topic lat5 --partitions 1 \
        --record-size 1024 --rate-mb 5 --duration "$latency_s" --acks -1 -X linger.ms=0
    first_read "$round"
    catchup "$round"
    failover "$round"
    record "$round" rss_load "{\"kib\":$(cat "$work/rss_peak")}"
    stop_cluster
}

say "$rounds round(s) of Kafka ($brokers KRaft node(s)) and Spool ($brokers broker(s) + etcd), RF=$rf, acks=all$( ((security)) && echo ", plaintext and SASL_SSL/SCRAM-SHA-512"); results in $out_dir"
wall_start=$SECONDS
for ((round = 1; round <= rounds; round++)); do
    for kind in $clusters; do
        say "round $round/$rounds: $kind"
        run_round "$round"
    done
done
wall_s=$((SECONDS - wall_start))
python3 -c 'import json,sys; print(json.dumps(dict(cluster="machine", round=0, scenario="run_info", command=sys.argv[1], date=sys.argv[2], wall_s=int(sys.argv[3]), quick=bool(int(sys.argv[4])), kafka_version=sys.argv[5], cores=int(sys.argv[6]), down_s=int(sys.argv[7]), brokers=int(sys.argv[8]), security=bool(int(sys.argv[9])))))' \
    "$command_line" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$wall_s" "$quick" "$(basename "$kafka_dir" | sed 's/^kafka-//')" \
    "$(nproc)" "$down_s" "$brokers" "$security" >>"$raw"
python3 bench/replicated_report.py "$raw" >"$out_dir/results.md"
# Key rows into bench/results/history.tsv (bench/history.py show prints them per commit).
if ((!security && !quick)); then
    python3 bench/history.py append --source "replicated-${brokers}b" "$raw" \
        first_read_100B_p1:mb_per_s second_read_100B_p1:mb_per_s first_read_100B_p1:stalls:lower \
        first_read_100B_p1_deepq:mb_per_s produce_1024B_p6:mb_per_s produce_100B_p6:records_per_s \
        latency_5MBps:p99_us:lower latency_5MBps:p999_us:lower failover:ack_max_gap_ms:lower
fi
cat "$out_dir/results.md"
say "wall time $((wall_s / 60)) min $((wall_s % 60)) s; results in $out_dir"
if [[ -s "$failures" ]]; then
    say "$(wc -l <"$failures") run(s) failed:"
    cat "$failures" >&2
    exit 1
fi
