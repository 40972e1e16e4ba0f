#!/usr/bin/env bash
# e2e test on the real node (fixture: scripts/k8s/node.sh): a Pod from a locally made image (the
# Debian base of scripts/k8s/base-image.sh, imported into the node's containerd) is scheduled,
# runs as non-root with a read-only root filesystem, turns Ready once its exec readiness probe
# passes, resolves a cluster name through CoreDNS, and is gone after deletion.
set -euo pipefail
source "$(dirname "$0")/node_lib.sh"
ns="node-pod-$$"
fail() { echo "FAIL: $*" >&2; kc -n "$ns" describe pod probe >&2 || true; exit 1; }
trap 'kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

kc create namespace "$ns" >/dev/null
kc -n "$ns" wait --for=jsonpath='{.metadata.name}' serviceaccount/default --timeout 30s >/dev/null
start=$(date +%s%N)
kc -n "$ns" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: probe}
spec:
  terminationGracePeriodSeconds: 1
  securityContext: {runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001,
                    seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: main
    image: docker.io/library/debian:12-slim
    imagePullPolicy: Never
    # Ready only once the marker exists, written after a delay: the probe must really run.
    command: [sh, -c, "sleep 2; touch /tmp/ready; exec sleep 3600"]
    readinessProbe:
      exec: {command: [test, -e, /tmp/ready]}
      periodSeconds: 1
    securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false,
                      capabilities: {drop: [ALL]}}
    volumeMounts: [{name: tmp, mountPath: /tmp}]
  volumes: [{name: tmp, emptyDir: {}}]
YAML
kc -n "$ns" wait --for=jsonpath='{.status.phase}'=Running pod/probe --timeout 60s >/dev/null ||
    fail "pod not Running"
running=$(date +%s%N)
# Not Ready before the probe could pass (the marker comes 2 s after start).
ready_now=$(kc -n "$ns" get pod probe -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')
kc -n "$ns" wait --for=condition=Ready pod/probe --timeout 60s >/dev/null || fail "pod not Ready"
ready=$(date +%s%N)
echo "pod Running after $(((running - start) / 1000000)) ms, Ready after $(((ready - start) / 1000000)) ms (Ready at Running: $ready_now)"

ip=$(kc -n "$ns" get pod probe -o jsonpath='{.status.podIP}')
[[ "$ip" == 10.244.7.* ]] || fail "pod IP $ip is not on the node's bridge range"
uid=$(kc -n "$ns" exec probe -- id -u) || fail "kubectl exec failed"
[ "$uid" = 10001 ] || fail "pod runs as uid $uid"
if kc -n "$ns" exec probe -- touch /should-fail 2>/dev/null; then fail "root filesystem is writable"; fi
# CoreDNS answers the cluster's names (getent uses the pod's resolv.conf: the node's DNS).
kc -n "$ns" exec probe -- getent hosts kubernetes.default.svc.cluster.local | grep -q '^10\.96\.0\.1 ' ||
    fail "kubernetes.default.svc.cluster.local does not resolve to 10.96.0.1 in the pod"
kc -n "$ns" logs probe >/dev/null || fail "kubectl logs failed"

kc -n "$ns" delete pod probe --timeout 30s >/dev/null || fail "pod not deleted"
echo "PASS: pod ran, probed Ready, resolved cluster DNS, ran as 10001 read-only, deleted"
