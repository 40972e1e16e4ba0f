# What the Java-client benches (rebalance.sh, share.sh) share. Source it from the repo root with
# the bench's name in $bench, after `set -euo pipefail`.
#
#   java_bench_setup SOURCE.java   checks the tools and the spool-broker binary
#       (SPOOL_BENCH_SPOOL_BIN, default build/release/broker/app/spool-broker), fetches Kafka's jars
#       (SPOOL_KAFKA_VERSION, scripts/peers/versions.sh), makes the results directory and a
#       scratch directory whose brokers (start-spool.sh / start-kafka.sh with --data-dir
#       $work/spool, $work/kafka) stop at exit, and compiles SOURCE with bench/java/BenchOpts.java
#       (the drivers' command line). Sets root, spool_bin, kafka_dir, out
#       (bench/results/<stamp>-$bench) and work; exports BENCH_COMMIT.
#   java_bench_run CLASS ARGS...   runs CLASS on Kafka's client jars (one JVM, 512 MiB heap).
#   java_bench_record LOG CLUSTER LOAD ROUND   appends each JSON line of the driver's output LOG to
#       $out/raw.jsonl with cluster, load1, round and failed (its timed_out), and scenario as the
#       driver gives it or else protocol_phase (RebalanceBench) or phase; echoes them to stderr.

java_bench_setup() {
    root=$PWD
    export BENCH_COMMIT=${BENCH_COMMIT:-$(python3 bench/history.py commit)}
    spool_bin=${SPOOL_BENCH_SPOOL_BIN:-$root/build/release/broker/app/spool-broker}
    [[ -x $spool_bin ]] || { echo "$bench.sh: no spool-broker at $spool_bin (cmake --build --preset release)" >&2; exit 1; }
    local tool
    for tool in java javac; do
        command -v $tool >/dev/null || { echo "$bench.sh: $tool is missing (scripts/setup.sh --with-tests)" >&2; exit 1; }
    done
    kafka_dir=$(bash scripts/peers/fetch-kafka.sh --jars-only)
    out=$root/bench/results/$(date -u +%Y%m%dT%H%M%SZ)-$bench
    mkdir -p "$out"
    work=$(mktemp -d "/tmp/spool-$bench.XXXXXX")
    trap 'bash tests/fixtures/start-spool.sh stop --data-dir "$work/spool" >/dev/null 2>&1 || true
          bash tests/fixtures/start-kafka.sh stop --data-dir "$work/kafka" >/dev/null 2>&1 || true
          rm -rf "$work"' EXIT
    javac -nowarn -d "$work/classes" -cp "$kafka_dir/libs/*" "$1" bench/java/BenchOpts.java
}

java_bench_run() {
    java -Xmx512m -XX:TieredStopAtLevel=1 -Djava.net.preferIPv4Stack=true \
        -Dlog4j2.configurationFile="$root/tests/fixtures/log4j2.properties" \
        -cp "$work/classes:$kafka_dir/libs/*" "$@"
}

java_bench_record() {
    local line
    while read -r line; do
        [[ $line == \{* ]] || continue
        echo "$2 round $4: $line load=$3" >&2
        python3 -c 'import json, sys
d = json.loads(sys.argv[1])
d.update(cluster=sys.argv[2], load1=float(sys.argv[3]), round=int(sys.argv[4]),
         failed=bool(d.get("timed_out")))
d.setdefault("scenario", d["protocol"] + "_" + d["phase"] if "protocol" in d else d["phase"])
print(json.dumps(d))' "$line" "$2" "$3" "$4" >>"$out/raw.jsonl"
    done <"$1"
}
