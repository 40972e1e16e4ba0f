# Sourced by the node tests (node_*_test.sh NODE_DIR [SRC]): kubectl (and helm) against the
# node's cluster, a work directory removed at exit, and the operator's helm install with the image
# node_fixture.sh imported. Each test sets `ns` and its own fail() and EXIT cleanup.
DIR="${1:?usage: $(basename "$0") NODE_DIR [SRC]}" SRC="${2:-}"
KUBECTL="${SPOOL_KUBECTL:?SPOOL_KUBECTL unset}"
kc() { "$KUBECTL" --kubeconfig "$DIR/kubeconfig" "$@"; }
work=$(mktemp -d)

# Private helm state: tests never read or write the user's helm config or cache.
use_helm() {
    helm="$("${SRC:?SRC unset}/scripts/peers/fetch-helm.sh")/bin/helm"
    export HELM_CONFIG_HOME=$work/config HELM_CACHE_HOME=$work/cache HELM_DATA_HOME=$work/data
}
hm() { "$helm" --kubeconfig "$DIR/kubeconfig" "$@"; }

# install_operator RELEASE: charts/spool into $ns, one replica watching $ns, the local image.
install_operator() {
    hm install "$1" "$SRC/charts/spool" -n "$ns" --set replicas=1 \
        --set image.repository=localhost/spool-operator --set image.tag=e2e \
        --set image.pullPolicy=Never --set watchNamespace="$ns" --wait --timeout 120s >/dev/null
}
