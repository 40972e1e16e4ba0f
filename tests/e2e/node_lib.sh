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

# install_operator RELEASE [HELM ARGS...]: charts/spool into $ns, one replica watching $ns, the
# local images (operator, and etcd unless the arguments turn it off).
install_operator() {
    local release="$1"
    shift
    hm install "$release" "$SRC/charts/spool" -n "$ns" --set replicas=1 \
        --set image.repository=localhost/spool-operator --set image.tag=e2e \
        --set image.pullPolicy=Never --set watchNamespace="$ns" \
        --set etcd.image.repository=localhost/spool-etcd --set etcd.image.tag=e2e \
        --set etcd.image.pullPolicy=Never "$@" --wait --timeout 120s >/dev/null
}

# apply_cluster REPLICAS [SPEC LINE...]: the Cluster "demo" in $ns on the local broker image,
# 1Gi claims (of StorageClass $CLUSTER_STORAGE_CLASS, default none); each SPEC LINE is one more
# YAML line of its spec ("key: value"). Plaintext listeners (the default is TLS and SCRAM, which
# node_security_test.sh covers) unless a line says "security: ...".
apply_cluster() {
    local replicas="$1" line security="security: {listeners: {internal: {tls: false, authentication: none}}}"
    shift
    for line in "$@"; do [[ "$line" != security:* ]] || security=""; done
    [ -z "$security" ] || set -- "$@" "$security"
    kc apply -f - >/dev/null <<YAML
apiVersion: spool.dev/v1alpha1
kind: Cluster
metadata: {name: demo, namespace: $ns}
spec:
  replicas: $replicas
  image: localhost/spool-broker:e2e
  imagePullPolicy: Never
  storage: {size: 1Gi, storageClassName: "${CLUSTER_STORAGE_CLASS:-}"}
$(for line in "$@"; do echo "  $line"; done)
YAML
}

# host_pv NAME CLAIM_NAMESPACE CLAIM [STORAGE_CLASS]: a hostPath PersistentVolume under
# $DIR/volumes reserved for that claim, writable by uid 10001 (fsGroup does not apply to hostPath
# volumes), of no StorageClass unless one is given.
host_pv() {
    mkdir -p "$DIR/volumes/$1"
    chown 10001:10001 "$DIR/volumes/$1"
    kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: PersistentVolume
metadata: {name: $1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  storageClassName: "${4:-}"
  persistentVolumeReclaimPolicy: Retain
  claimRef: {namespace: $2, name: $3}
  hostPath: {path: $DIR/volumes/$1, type: Directory}
YAML
}
