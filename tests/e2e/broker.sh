#!/usr/bin/env bash
# CTest fixture for the operator's e2e tests: starts or stops the broker the Topic reconciler and
# the scale-down check talk to.
#   broker.sh start|stop TARGET DIR [SPOOL_BROKER_BIN]
# TARGET spool (default; the spool-broker built in this tree) or kafka (Apache Kafka from the peer
# cache). Both run as broker id 1, the id Kafka's fixture uses, so tests can name it. spool-broker
# gets a free Kafka port and a free HTTP admin port; DIR/bootstrap and (spool only) DIR/http hold
# the addresses. SPOOL_E2E_BROKER_BIN overrides the spool-broker binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$here/../fixtures
source "$fixtures/lib.sh"
cmd=$1 target=$2 dir=$3 bin=${SPOOL_E2E_BROKER_BIN:-${4:-}}
case $cmd:$target in
    start:spool)
        [[ -x "$bin" ]] || { echo "broker.sh: no spool-broker at '$bin': build the spool-broker target" >&2; exit 1; }
        http_port=$(fixture_free_port)
        "$fixtures/broker.sh" stop --target spool --data-dir "$dir" >/dev/null 2>&1 || true
        rm -rf "$dir/logs"
        "$fixtures/broker.sh" start --target spool --bin "$bin" --data-dir "$dir" \
            --override node.id=1 --override "http.listener=127.0.0.1:$http_port"
        echo "127.0.0.1:$http_port" >"$dir/http"
        ;;
    start:kafka)
        rm -f "$dir/http"
        "$fixtures/broker.sh" start --target kafka --data-dir "$dir"
        ;;
    stop:*) exec "$fixtures/broker.sh" stop --target "$target" --data-dir "$dir" ;;
    *) echo "usage: broker.sh start|stop spool|kafka DIR [SPOOL_BROKER_BIN]" >&2; exit 2 ;;
esac
