#!/usr/bin/env bash
# CTest fixture: starts the control plane in DIR and installs the CRDs from crds/ with kubectl
# (server-side apply), waiting until they are Established.
set -euo pipefail
DIR="$1"; SRC="$2"
"$SRC/scripts/k8s/stop.sh" "$DIR" >/dev/null 2>&1 || true
"$SRC/scripts/k8s/start.sh" "$DIR"
KUBECTL="${KUBECTL:-/usr/lib/google-cloud-sdk/bin/kubectl.1.33}"
if [ ! -x "$KUBECTL" ]; then
    KUBECTL="$(command -v kubectl)"
fi
"$KUBECTL" --kubeconfig "$DIR/kubeconfig" apply --server-side -f "$SRC/crds/"
"$KUBECTL" --kubeconfig "$DIR/kubeconfig" wait --for condition=established --timeout=60s \
    crd/clusters.spool.dev crd/topics.spool.dev
