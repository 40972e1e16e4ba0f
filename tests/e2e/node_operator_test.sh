#!/usr/bin/env bash
# e2e test on the real node (fixture: node_fixture.sh): `helm install` of charts/spool with the
# operator image the Dockerfile builds, in a namespace that enforces Pod Security `restricted`.
# The operator pod turns Ready and, from inside the pod, reaches the API server the way every
# in-cluster client does - the `kubernetes` Service (10.96.0.1, kube-proxy) with its ServiceAccount
# token and the published root CA - and proves it by holding its leader-election Lease.
set -euo pipefail
source "$(dirname "$0")/node_lib.sh"
use_helm
ns="node-operator-$$" release="op-$$"
full=$release-operator
fail() {
    echo "FAIL: $*" >&2
    kc -n "$ns" describe pods >&2 || true
    kc -n "$ns" logs "deploy/$full" --tail 40 >&2 || true
    exit 1
}
trap 'hm uninstall "$release" -n "$ns" >/dev/null 2>&1 || true
      kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

kc create namespace "$ns" >/dev/null
kc label namespace "$ns" pod-security.kubernetes.io/enforce=restricted >/dev/null
start=$(date +%s%N)
# The chart's etcd is node_kafka_cluster_test.sh's.
install_operator "$release" --set etcd.enabled=false || fail "helm install did not become ready"
kc -n "$ns" wait --for=condition=Available "deploy/$full" --timeout 60s >/dev/null ||
    fail "operator deployment not Available"
ready=$(date +%s%N)
pod=$(kc -n "$ns" get pods -o jsonpath='{.items[0].metadata.name}')
echo "operator pod $pod Ready $(((ready - start) / 1000000)) ms after helm install"
holder=""
for _ in $(seq 1 60); do
    holder=$(kc -n "$ns" get leases -o jsonpath='{.items[*].spec.holderIdentity}' 2>/dev/null || true)
    [[ "$holder" == *"$pod"* ]] && break
    sleep 0.5
done
[[ "$holder" == *"$pod"* ]] || fail "no Lease in $ns held by $pod (holders: '$holder')"
env_host=$(kc -n "$ns" exec "$pod" -- printenv KUBERNETES_SERVICE_HOST 2>/dev/null || true)
[ "$env_host" = 10.96.0.1 ] || fail "the pod's KUBERNETES_SERVICE_HOST is '$env_host', not the Service IP"
hm uninstall "$release" -n "$ns" --wait --timeout 60s >/dev/null || fail "helm uninstall failed"
echo "PASS: operator pod Ready under restricted Pod Security, holds its Lease through the kubernetes Service"
