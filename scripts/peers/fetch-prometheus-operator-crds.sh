#!/usr/bin/env bash
# Fetches the Prometheus Operator's CRDs (ServiceMonitor, PodMonitor, PrometheusRule) for the
# chart's monitoring e2e test (tests/e2e/helm_monitoring_test.sh): `go mod download` of the
# module github.com/prometheus-operator/prometheus-operator from the Go module proxy, then its
# example/prometheus-operator-crd/*.yaml copied into
# $SPOOL_CACHE/prometheus-operator-crds-<version>/. Prints that directory. Idempotent; a warm run
# starts no go command.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
version=${SPOOL_PROMETHEUS_OPERATOR_VERSION:-v0.85.0}
module=github.com/prometheus-operator/prometheus-operator
peer_lock prometheus-operator-crds

dir=$SPOOL_CACHE/prometheus-operator-crds-$version
hash=$(peer_hash "$version" "$0")
if ! peer_is_current "$dir" "$hash"; then
    command -v go >/dev/null || { peer_log "go is missing"; exit 1; }
    peer_log "downloading $module@$version (Go module proxy) for its CRDs"
    mkdir -p "$dir" "$SPOOL_CACHE/go"
    src=$(
        export GOPATH=$SPOOL_CACHE/go GOMODCACHE=$SPOOL_CACHE/go/pkg/mod GOFLAGS=-mod=mod
        cd "$dir" && nice -n 15 go mod download -json "$module@$version" |
            python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])'
    )
    for kind in servicemonitors podmonitors prometheusrules; do
        cp "$src/example/prometheus-operator-crd/monitoring.coreos.com_$kind.yaml" "$dir/"
    done
    chmod u+w "$dir"/*.yaml
    peer_mark_current "$dir" "$hash"
fi
echo "$dir"
