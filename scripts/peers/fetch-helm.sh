#!/usr/bin/env bash
# Builds helm (helm.sh/helm/v3/cmd/helm) from the Go module proxy into
# $SPOOL_CACHE/helm-<version>/bin/helm, for the chart's e2e tests (tests/e2e). GOPATH and
# GOMODCACHE live under $SPOOL_CACHE/go so the build leaves nothing in the default Go cache.
# Prints the peer directory. Idempotent; a warm run starts no go command.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
SPOOL_HELM_VERSION=${SPOOL_HELM_VERSION:-v3.22.0}  # Go module helm.sh/helm/v3
peer_lock helm

dir=$SPOOL_CACHE/helm-$SPOOL_HELM_VERSION
hash=$(peer_hash "$SPOOL_HELM_VERSION" "$0")
if ! peer_is_current "$dir" "$hash" || [[ ! -x "$dir/bin/helm" ]]; then
    command -v go >/dev/null || { peer_log "go is missing"; exit 1; }
    peer_log "building helm $SPOOL_HELM_VERSION into $dir (Go module proxy)"
    mkdir -p "$dir/bin" "$SPOOL_CACHE/go"
    (
        export GOPATH=$SPOOL_CACHE/go GOMODCACHE=$SPOOL_CACHE/go/pkg/mod GOBIN=$dir/bin.tmp
        export GOFLAGS=-mod=mod CGO_ENABLED=0
        nice -n 15 go install -trimpath -ldflags "-s -w" "helm.sh/helm/v3/cmd/helm@$SPOOL_HELM_VERSION"
    ) >&2
    mv "$dir/bin.tmp/helm" "$dir/bin/helm"
    rmdir "$dir/bin.tmp"
    "$dir/bin/helm" version --short >&2
    peer_mark_current "$dir" "$hash"
fi
echo "$dir"
