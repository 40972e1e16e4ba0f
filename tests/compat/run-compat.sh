#!/usr/bin/env bash
# Runs one client's compatibility checks against a broker. Used by CTest (tests/compat/CMakeLists.txt)
# and by hand:
#
#   tests/compat/run-compat.sh CLIENT [CHECKER]
#     CLIENT: kcat | rdkafkacpp | java | kafka-cli | java-groups | kafkajs | franz | restart
#       (restart: kcat across a broker restart, always with its own broker; java-groups: classic
#       consumer groups with the Java client and kafka-consumer-groups)
#     CHECKER: the built checker binary (rdkafkacpp only: the GoogleTest executable)
#
# Broker: SPOOL_BOOTSTRAP=host:port uses a running broker; otherwise one is started for this run
# with tests/fixtures/broker.sh in a temporary data directory and stopped afterwards:
#   SPOOL_COMPAT_TARGET=spool (default; needs SPOOL_BROKER_BIN) or kafka (real Apache Kafka).
# For the spool target a broker that does not stop cleanly on SIGTERM fails the run.
# Peers come from scripts/peers/ (fetched on first use, cached in $SPOOL_CACHE).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

client=${1:?usage: run-compat.sh kcat|rdkafkacpp|java|kafka-cli|java-groups|kafkajs|franz|restart [CHECKER]}
checker=${2:-}
target=${SPOOL_COMPAT_TARGET:-spool}

# Resolve the peer first: a missing peer is a setup error, reported before any broker starts.
case $client in
    kcat | restart) command -v kcat >/dev/null || { echo "kcat is not installed (scripts/setup.sh --with-tests)" >&2; exit 1; } ;;
    rdkafkacpp) [[ -x "$checker" ]] || { echo "rdkafkacpp: no checker binary '$checker'" >&2; exit 1; } ;;
    java | kafka-cli | java-groups) peer_dir=$(bash "$root/scripts/peers/fetch-kafka.sh") ;;
    kafkajs) peer_dir=$(bash "$root/scripts/peers/fetch-kafkajs.sh") ;;
    franz) peer_dir=$(bash "$root/scripts/peers/fetch-franz.sh") ;;
    *) echo "run-compat.sh: unknown client '$client'" >&2; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/spool-compat-$client.XXXXXX")
broker_started=0
cleanup() {
    local status=$?
    if ((broker_started)); then
        if ! "$root/tests/fixtures/broker.sh" stop --target "$target" --data-dir "$work/broker"; then
            echo "run-compat: the $target broker did not shut down cleanly" >&2
            ((status != 0)) || status=1
        fi
        if ((status != 0)); then
            local log
            for log in "$work"/broker/{spool,kafka}.log; do
                [[ -f "$log" ]] || continue
                echo "---- last lines of $log ----" >&2
                tail -n 60 "$log" >&2
            done
        fi
    fi
    if ((status == 0)) || [[ -n "${CI:-}" ]]; then rm -rf "$work"; else echo "run-compat: kept $work" >&2; fi
    exit "$status"
}
trap cleanup EXIT

if [[ $client == restart ]]; then
    # Stops and restarts the broker itself; cleanup() only stops one left running by a failure.
    broker_started=1
    python3 "$here/kcat/restart_compat.py" --target "$target" --data-dir "$work/broker" \
        ${SPOOL_BROKER_BIN:+--bin "$SPOOL_BROKER_BIN"}
    exit
fi

if [[ -n "${SPOOL_BOOTSTRAP:-}" ]]; then
    bootstrap=$SPOOL_BOOTSTRAP
else
    broker_started=1
    bootstrap=$("$root/tests/fixtures/broker.sh" start --target "$target" --data-dir "$work/broker" \
        ${SPOOL_BROKER_BIN:+--bin "$SPOOL_BROKER_BIN"})
fi
echo "run-compat: $client against $bootstrap ($([[ -n "${SPOOL_BOOTSTRAP:-}" ]] && echo given || echo "$target"))"

case $client in
    kcat) python3 "$here/kcat/kcat_compat.py" --bootstrap "$bootstrap" ;;
    rdkafkacpp) SPOOL_BOOTSTRAP=$bootstrap "$checker" ;;
    java | kafka-cli | java-groups)
        case $client in java) suite=clients ;; kafka-cli) suite=cli ;; *) suite=groups ;; esac
        # C1 only: the checker's JVM is short-lived, so startup matters more than peak speed.
        java -Xshare:auto -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$here/java/log4j2.properties" \
            -cp "$peer_dir/compat-classes:$peer_dir/libs/*" dev.spool.compat.Main \
            --bootstrap "$bootstrap" --suite "$suite"
        ;;
    kafkajs) NODE_PATH=$peer_dir/node_modules node "$here/kafkajs/compat.js" --bootstrap "$bootstrap" ;;
    franz) "$peer_dir/franz-compat" --bootstrap "$bootstrap" ;;
esac
