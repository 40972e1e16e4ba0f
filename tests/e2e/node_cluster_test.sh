#!/usr/bin/env bash
# e2e test on the real node (fixture: node_fixture.sh): the operator, installed by helm with its
# image, turns a Cluster into a running broker. A 1-broker Cluster (the broker image built from
# the Dockerfile, a hostPath PersistentVolume for its claim), in a namespace that enforces Pod
# Security `restricted`, becomes Ready in its status; the broker pod runs from the StatefulSet
# with its claim Bound, its per-pod DNS name resolves in the cluster (CoreDNS, headless Service)
# to its address, another pod connects to it through the bootstrap Service's ClusterIP, and a
# Kafka client on the host (kcat) sees it advertise that name with the node id of its ordinal.
set -euo pipefail
source "$(dirname "$0")/node_lib.sh"
use_helm
ns="node-cluster-$$" release="op-$$" pv="node-cluster-$$-data"
fail() {
    echo "FAIL: $*" >&2
    kc -n "$ns" get cluster,statefulset,pods,pvc -o wide >&2 || true
    kc -n "$ns" get cluster demo -o jsonpath='{.status}' >&2 || true
    kc -n "$ns" logs "deploy/$release-operator" --tail 30 >&2 || true
    kc -n "$ns" logs demo-0 --tail 30 >&2 || true
    exit 1
}
cleanup() {
    kc -n "$ns" delete cluster demo --timeout 60s >/dev/null 2>&1
    hm uninstall "$release" -n "$ns" >/dev/null 2>&1
    kc delete namespace "$ns" --wait=false >/dev/null 2>&1
    kc delete pv "$pv" --wait=false >/dev/null 2>&1
    rm -rf "$work" "$DIR/volumes/$pv"
}
trap cleanup EXIT

kc create namespace "$ns" >/dev/null
# The operator's pods and the brokers' must meet Pod Security `restricted`, or none is created.
kc label namespace "$ns" pod-security.kubernetes.io/enforce=restricted >/dev/null
# No etcd: a one-broker Cluster keeps the broker's embedded metadata store.
install_operator "$release" --set etcd.enabled=false || fail "helm install did not become ready"
start=$(date +%s%N)
host_pv "$pv" "$ns" data-demo-0
apply_cluster 1
kc -n "$ns" wait --for=condition=Ready cluster/demo --timeout 120s >/dev/null ||
    fail "Cluster demo not Ready"
ready=$(date +%s%N)
echo "Cluster demo Ready $(((ready - start) / 1000000)) ms after apply"
[ "$(kc -n "$ns" get cluster demo -o jsonpath='{.status.readyReplicas}')" = 1 ] ||
    fail "status.readyReplicas is not 1"
[ "$(kc -n "$ns" get pvc data-demo-0 -o jsonpath='{.status.phase}/{.spec.volumeName}')" = "Bound/$pv" ] ||
    fail "claim data-demo-0 is not Bound to $pv"
ip=$(kc -n "$ns" get pod demo-0 -o jsonpath='{.status.podIP}')
name="demo-0.demo-brokers.$ns.svc"
resolved=$(kc -n "$ns" exec demo-0 -- getent hosts "$name.cluster.local" | awk '{print $1}') ||
    fail "$name does not resolve in the pod"
[ "$resolved" = "$ip" ] || fail "$name resolves to '$resolved', not the pod's $ip"
kcat -b "$ip:9092" -L -m 10 >"$work/metadata" 2>&1 || fail "kcat metadata: $(cat "$work/metadata")"
grep -q "broker 0 at $name:9092" "$work/metadata" ||
    fail "the broker does not advertise node 0 at $name:9092: $(cat "$work/metadata")"
# In the cluster, a client pod (the operator's) reaches the broker through the bootstrap Service:
# CoreDNS gives its ClusterIP, kube-proxy forwards to the broker pod (bash's /dev/tcp: no client
# in the image).
bootstrap=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.bootstrap}')
operator_pod=$(kc -n "$ns" get pods -l app.kubernetes.io/name=spool-operator \
    -o jsonpath='{.items[0].metadata.name}')
kc -n "$ns" exec "$operator_pod" -- timeout 5 bash -c "exec 3<>/dev/tcp/${bootstrap%:*}/${bootstrap##*:}" ||
    fail "no connection from $operator_pod to the bootstrap Service $bootstrap"
# The broker wrote its log directory on the claimed volume.
[ -n "$(ls -A "$DIR/volumes/$pv")" ] || fail "nothing written to the PersistentVolume"
echo "PASS: a 1-broker Cluster is Ready on the node, claim Bound, advertised at $name (node 0), reached in the cluster through $bootstrap"
