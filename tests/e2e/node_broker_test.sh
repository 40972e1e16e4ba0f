#!/usr/bin/env bash
# e2e test on the real node (fixture: node_fixture.sh): a spool-broker pod from the image the
# Dockerfile builds (embedded metadata store) runs in a namespace that enforces the Pod Security
# `restricted` profile, non-root with a read-only root filesystem, turns Ready through its /readyz
# probe, and a Kafka client on the host (kcat) produces to it and consumes back through the pod's
# address (advertised from the downward API): every record once, in order.
set -euo pipefail
source "$(dirname "$0")/node_lib.sh"
RECORDS=${RECORDS:-500}
ns="node-broker-$$"
fail() {
    echo "FAIL: $*" >&2
    kc -n "$ns" describe pod broker >&2 || true
    kc -n "$ns" logs broker --tail 40 >&2 || true
    exit 1
}
trap 'kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

kc create namespace "$ns" >/dev/null
# The apiserver's PodSecurity admission rejects the pod unless it meets `restricted`.
kc label namespace "$ns" pod-security.kubernetes.io/enforce=restricted >/dev/null
kc -n "$ns" wait --for=jsonpath='{.metadata.name}' serviceaccount/default --timeout 30s >/dev/null
start=$(date +%s%N)
kc -n "$ns" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: broker, labels: {app: spool-broker}}
spec:
  terminationGracePeriodSeconds: 5
  securityContext: {runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001,
                    seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: broker
    image: localhost/spool-broker:e2e
    imagePullPolicy: Never
    env:
    - name: POD_IP
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
    args:
    - --override
    - node.id=1
    - --override
    - listeners=PLAINTEXT://0.0.0.0:9092
    - --override
    - advertised.listeners=PLAINTEXT://$(POD_IP):9092
    - --override
    - log.dirs=/var/lib/spool/logs
    - --override
    - http.listener=0.0.0.0:9644
    ports:
    - {name: kafka, containerPort: 9092}
    - {name: http, containerPort: 9644}
    readinessProbe:
      httpGet: {path: /readyz, port: http}
      periodSeconds: 1
    resources:
      requests: {cpu: 100m, memory: 128Mi}
    securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false,
                      capabilities: {drop: [ALL]}}
    volumeMounts: [{name: data, mountPath: /var/lib/spool}]
  volumes: [{name: data, emptyDir: {}}]
YAML
kc -n "$ns" wait --for=condition=Ready pod/broker --timeout 90s >/dev/null || fail "broker pod not Ready"
ready=$(date +%s%N)
ip=$(kc -n "$ns" get pod broker -o jsonpath='{.status.podIP}')
[[ "$ip" == 10.244.7.* ]] || fail "pod IP $ip is not on the node's bridge range"
echo "broker pod Ready after $(((ready - start) / 1000000)) ms at $ip"
uid=$(kc -n "$ns" exec broker -- id -u) || fail "kubectl exec failed"
[ "$uid" = 10001 ] || fail "broker runs as uid $uid"
if kc -n "$ns" exec broker -- touch /usr/local/bin/x 2>/dev/null; then fail "root filesystem is writable"; fi
# The profile is really enforced: the same namespace refuses a privileged pod.
if kc -n "$ns" run privileged --image localhost/spool-broker:e2e --image-pull-policy Never \
    --privileged --dry-run=server >/dev/null 2>"$work/psa"; then
    fail "a privileged pod was admitted: the restricted profile is not enforced"
fi
grep -q 'violates PodSecurity "restricted' "$work/psa" || fail "privileged pod refused for another reason: $(cat "$work/psa")"

bootstrap="$ip:9092"
kcat -b "$bootstrap" -L -m 10 >"$work/metadata" 2>&1 || fail "kcat metadata: $(cat "$work/metadata")"
grep -q "broker 1 at $ip:9092" "$work/metadata" || fail "metadata does not advertise $ip:9092: $(cat "$work/metadata")"
topic=node-e2e
seq 1 "$RECORDS" | sed 's/^/record-/' >"$work/sent"
kcat -b "$bootstrap" -P -t "$topic" -X acks=all -m 30 <"$work/sent" 2>"$work/produce.err" ||
    fail "produce: $(cat "$work/produce.err")"
kcat -b "$bootstrap" -C -t "$topic" -o beginning -c "$RECORDS" -e -q -m 30 >"$work/received" 2>"$work/consume.err" ||
    fail "consume: $(cat "$work/consume.err")"
diff -q "$work/sent" "$work/received" >/dev/null ||
    fail "consumed $(wc -l <"$work/received") records, not the $RECORDS produced in order"
done_at=$(date +%s%N)
echo "PASS: $RECORDS records produced with acks=all and consumed back in order through $bootstrap" \
    "($(((done_at - ready) / 1000000)) ms)"
