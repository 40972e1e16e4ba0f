#!/usr/bin/env bash
# CTest fixture: starts the control plane in DIR and installs the CRDs from crds/ with kubectl
# (server-side apply), waiting until they are Established.
set -euo pipefail
DIR="$1"; SRC="$2"
"$SRC/scripts/k8s/stop.sh" "$DIR" >/dev/null 2>&1 || true
"$SRC/scripts/k8s/start.sh" "$DIR"
# kubectl at the control plane's version (scripts/k8s/build.sh), set by CTest.
KUBECTL="${SPOOL_KUBECTL:?SPOOL_KUBECTL: the kubectl of scripts/k8s/build.sh}"
[ -x "$KUBECTL" ] || { echo "missing $KUBECTL: run scripts/k8s/build.sh" >&2; exit 1; }
"$KUBECTL" --kubeconfig "$DIR/kubeconfig" apply --server-side -f "$SRC/crds/"
"$KUBECTL" --kubeconfig "$DIR/kubeconfig" wait --for condition=established --timeout=60s \
    crd/clusters.spool.dev crd/topics.spool.dev crd/users.spool.dev
