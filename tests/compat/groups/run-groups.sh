#!/usr/bin/env bash
# Consumer-group checks with real clients against a broker under test:
#   kcat -G / librdkafka 2.0.2   kcat_groups.py (starts and restarts its own broker)
#   KafkaJS 2.2.4               kafkajs_groups.js
#   franz-go v1.22.3            franz/ (cooperative-sticky)
#   kafka-consumer-groups 4.1.1 cli_groups.py (--describe lag, --reset-offsets, --delete)
# (The Java client is covered by tests/compat/run-compat.sh java-groups.)
#
#   SPOOL_BROKER_BIN=build/<dir>/broker/app/spool-broker tests/compat/groups/run-groups.sh [kcat|kafkajs|franz|cli]...
#   SPOOL_COMPAT_TARGET=kafka tests/compat/groups/run-groups.sh      # the same checks against Apache Kafka
#
# Peers come from scripts/peers/ (cached in $SPOOL_CACHE). Exits non-zero if any check failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
target=${SPOOL_COMPAT_TARGET:-spool}
clients=("$@")
((${#clients[@]})) || clients=(kcat kafkajs franz cli)
work=$(mktemp -d "${TMPDIR:-/tmp}/spool-groups.XXXXXX")
status=0
started=0
stop_broker() {
    if ((started)); then
        "$root/tests/fixtures/broker.sh" stop --target "$target" --data-dir "$work/broker" || status=1
        started=0
    fi
}
trap 'stop_broker; rm -rf "$work"' EXIT

start_broker() {
    if ((!started)); then
        bootstrap=$("$root/tests/fixtures/broker.sh" start --target "$target" --data-dir "$work/broker" \
            ${SPOOL_BROKER_BIN:+--bin "$SPOOL_BROKER_BIN"})
        started=1
    fi
}

for client in "${clients[@]}"; do
    echo "== $client"
    case $client in
        kcat)
            python3 "$here/kcat_groups.py" --target "$target" --data-dir "$work/kcat" \
                ${SPOOL_BROKER_BIN:+--bin "$SPOOL_BROKER_BIN"} || status=1 ;;
        kafkajs)
            peer=$(bash "$root/scripts/peers/fetch-kafkajs.sh")
            start_broker
            NODE_PATH=$peer/node_modules node "$here/kafkajs_groups.js" --bootstrap "$bootstrap" || status=1 ;;
        franz)
            (cd "$here/franz" && go build -mod=readonly -trimpath -buildvcs=false -o "$work/franz-groups" .)
            start_broker
            "$work/franz-groups" --bootstrap "$bootstrap" || status=1 ;;
        cli)
            command -v kcat >/dev/null || { echo "kcat is not installed (scripts/setup.sh --with-tests)" >&2; exit 1; }
            peer=$(bash "$root/scripts/peers/fetch-kafka.sh")
            start_broker
            python3 "$here/cli_groups.py" --bootstrap "$bootstrap" --kafka-dir "$peer" || status=1 ;;
        *) echo "run-groups.sh: unknown client $client" >&2; exit 2 ;;
    esac
done
exit $status
