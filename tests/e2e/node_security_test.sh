#!/usr/bin/env bash
# e2e test on the real node (fixture: node_fixture.sh): a Cluster with spec.security (issue #34).
#
#   1. helm install with the chart's etcd; a 3-broker Cluster whose internal listener is SASL_SSL
#      (SCRAM-SHA-512) and whose POD listener is mTLS (client certificates of the clients CA)
#      turns Ready: the brokers replicate over the REPLICATION listener with certificates of the
#      cluster CA, which the operator keeps in Secrets.
#   2. kcat on the host, with a client certificate signed by the clients CA (CN=e2e-client, a
#      super user), produces 500 records with acks=all to a 3-replica topic through the POD
#      listener, verifying the brokers' certificates and their pod IPs against the cluster CA,
#      and consumes them back, all of them. Plaintext is refused on every Kafka port, TLS
#      without a client certificate on the mTLS one; the internal listener's certificate
#      verifies for the pod's DNS name.
#   3. A Topic is reconciled on the secured cluster (the operator's mTLS Kafka connection); the
#      admin API is HTTPS and answers 401 without credentials, 200 with the super user's
#      certificate.
#   4. A manual rolling restart completes: the operator asks each broker's /restart-safe over
#      HTTPS as its own super user before each restart.
#   5. The cluster CA is renewed (spool.dev/force-renew): the overlap runs its three rolled stages
#      until only the new CA is trusted and the brokers' certificate is signed by it, while a
#      producer sends acks=all batches (each batch trusting the bundle published then); every
#      acknowledged record is read back once.
set -euo pipefail
source "$(dirname "$0")/node_lib.sh"
use_helm
ns="node-sec-$$" release="sec-$$"
pvs=("$ns-etcd" "$ns-data-0" "$ns-data-1" "$ns-data-2")
t_begin=$(date +%s%N)
elapsed() { echo "$((($(date +%s%N) - t_begin) / 1000000)) ms"; }
fail() {
    echo "FAIL: $*" >&2
    kc -n "$ns" get cluster,topic,statefulset,pods,secrets -o wide >&2 || true
    kc -n "$ns" get cluster demo -o jsonpath='{.status}' >&2 || true
    echo >&2
    kc -n "$ns" get events --sort-by=.lastTimestamp 2>/dev/null | tail -30 >&2 || true
    kc -n "$ns" logs "deploy/$release-operator" --tail 40 >&2 || true
    for i in 0 1 2; do
        echo "--- demo-$i" >&2
        kc -n "$ns" logs "demo-$i" --tail 30 >&2 || true
    done
    exit 1
}
cleanup() {
    set +e
    [ -z "${producer_pid:-}" ] || kill "$producer_pid" 2>/dev/null
    kc -n "$ns" delete topic --all --timeout 60s >/dev/null 2>&1
    kc -n "$ns" delete cluster demo --timeout 60s >/dev/null 2>&1
    hm uninstall "$release" -n "$ns" >/dev/null 2>&1
    kc delete namespace "$ns" --wait=false >/dev/null 2>&1
    for pv in "${pvs[@]}"; do
        kc delete pv "$pv" --wait=false >/dev/null 2>&1
        rm -rf "${DIR:?}/volumes/$pv"
    done
    rm -rf "$work"
}
trap cleanup EXIT
command -v openssl >/dev/null || fail "openssl is missing on the host"
command -v curl >/dev/null || fail "curl is missing on the host"

secret_file() { # SECRET KEY FILE
    kc -n "$ns" get secret "$1" -o "jsonpath={.data.${2//./\\.}}" | base64 -d >"$3"
}
pod_ips() { kc -n "$ns" get pods -l app.kubernetes.io/instance=demo \
    -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}' | sort; }
mtls() { # kcat's TLS settings for the POD listener, trusting $1
    echo -X security.protocol=ssl -X "ssl.ca.location=$1" \
        -X "ssl.certificate.location=$work/client.crt" -X "ssl.key.location=$work/client.key"
}
# wait_rolled SECONDS: every broker pod replaced since uid_before, Ready, nothing pending.
wait_rolled() {
    local deadline=$(($(date +%s) + $1)) rolled pending ready uid
    while (($(date +%s) < deadline)); do
        rolled=0
        for i in 0 1 2; do
            uid=$(kc -n "$ns" get pod "demo-$i" -o jsonpath='{.metadata.uid}' 2>/dev/null || true)
            [ -n "$uid" ] && [ "$uid" != "${uid_before[$i]}" ] && rolled=$((rolled + 1))
        done
        pending=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.restartPending}')
        ready=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')
        ((rolled == 3)) && [ -z "$pending" ] && [ "$ready" = True ] && return 0
        sleep 1
    done
    return 1
}
remember_uids() {
    uid_before=()
    for i in 0 1 2; do uid_before[$i]=$(kc -n "$ns" get pod "demo-$i" -o jsonpath='{.metadata.uid}'); done
}

# --- 1. a secured Cluster turns Ready ---------------------------------------------------------
kc create namespace "$ns" >/dev/null
kc label namespace "$ns" pod-security.kubernetes.io/enforce=restricted >/dev/null
host_pv "$ns-etcd" "$ns" "data-$release-etcd-0"
for i in 0 1 2; do host_pv "$ns-data-$i" "$ns" "data-demo-$i"; done
install_operator "$release" || fail "helm install (operator and etcd) did not become ready"
apply_cluster 3 "podAddressListener: {enabled: true}" \
    "resources: {requests: {cpu: 100m, memory: 128Mi}}" \
    "security: {listeners: {internal: {tls: true, authentication: scram-sha-512}, pod: {tls: true, authentication: tls}}, authorization: {type: simple, superUsers: [e2e-client]}}"
kc -n "$ns" wait --for=condition=Ready cluster/demo --timeout 240s >/dev/null ||
    fail "secured Cluster demo not Ready"
echo "secured Cluster demo (3 brokers) Ready at $(elapsed)"
for s in demo-cluster-ca demo-cluster-ca-cert demo-clients-ca demo-clients-ca-cert demo-broker-certs demo-operator-cert; do
    kc -n "$ns" get secret "$s" >/dev/null || fail "Secret $s missing"
done
grep -q 'inter.broker.listener.name: "REPLICATION"' <(kc -n "$ns" get configmap demo-config \
    -o jsonpath='{.data.broker\.yaml}') || fail "brokers do not replicate over REPLICATION"

# --- 2. kcat with a clients-CA certificate through the mTLS listener --------------------------
secret_file demo-cluster-ca-cert ca.crt "$work/ca.crt"
secret_file demo-clients-ca ca.key "$work/clients-ca.key"
secret_file demo-clients-ca ca.crt "$work/clients-ca.crt"
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=e2e-client \
    -keyout "$work/client.key" -out "$work/client.csr" 2>/dev/null
openssl x509 -req -in "$work/client.csr" -CA "$work/clients-ca.crt" -CAkey "$work/clients-ca.key" \
    -CAcreateserial -days 2 -out "$work/client.crt" 2>/dev/null || fail "cannot sign a client certificate"
mapfile -t ips < <(pod_ips)
((${#ips[@]} == 3)) || fail "expected 3 broker pod IPs, got ${ips[*]}"
bootstrap=$(printf '%s:9093,' "${ips[@]}")
bootstrap=${bootstrap%,}
# The pod IPs join the broker certificate once the pods have them; the brokers load it when the
# kubelet has updated the mounted Secret.
deadline=$(($(date +%s) + 180))
until kcat -b "$bootstrap" $(mtls "$work/ca.crt") -L -m 10 >"$work/md" 2>&1; do
    (($(date +%s) < deadline)) || fail "kcat over mTLS: $(tail -5 "$work/md")"
    sleep 3
done
echo "kcat metadata over mTLS (certificate names checked) at $(elapsed)"
kc apply -f - >/dev/null <<YAML
apiVersion: spool.dev/v1alpha1
kind: Topic
metadata: {name: secure-orders, namespace: $ns}
spec:
  clusterRef: {name: demo}
  partitions: 3
  replicationFactor: 3
  config: {min.insync.replicas: "2"}
YAML
kc -n "$ns" wait --for=condition=Ready topic/secure-orders --timeout 120s >/dev/null ||
    fail "Topic secure-orders not Ready: $(kc -n "$ns" get topic secure-orders -o jsonpath='{.status}')"
echo "Topic secure-orders Ready (operator over mTLS) at $(elapsed)"
seq 1 500 | sed 's/^/rec-/' >"$work/sent"
kcat -b "$bootstrap" $(mtls "$work/ca.crt") -P -t secure-orders -X acks=all -m 30 <"$work/sent" \
    2>"$work/perr" || fail "produce over mTLS: $(tail -5 "$work/perr")"
kcat -b "$bootstrap" $(mtls "$work/ca.crt") -C -t secure-orders -o beginning -e -q -m 30 \
    >"$work/read" 2>"$work/cerr" || fail "consume over mTLS: $(tail -5 "$work/cerr")"
[ "$(sort "$work/sent")" = "$(sort "$work/read")" ] ||
    fail "read $(wc -l <"$work/read") of 500 records back"
echo "500 records produced (acks=all) and read back over mTLS"
grep -E '^ +partition [0-9]+, ' <(kcat -b "$bootstrap" $(mtls "$work/ca.crt") -L -t secure-orders -m 10) |
    grep -c 'replicas: [0-9],[0-9],[0-9],' | grep -qx 3 || fail "secure-orders is not 3 partitions of 3 replicas"

# Refusals: plaintext on each Kafka port, TLS without a client certificate on the mTLS one.
ip=${ips[0]}
for port in 9092 9093 9091; do
    ! kcat -b "$ip:$port" -L -m 5 >/dev/null 2>&1 || fail "plaintext metadata answered on $ip:$port"
done
! kcat -b "$ip:9093" -X security.protocol=ssl -X "ssl.ca.location=$work/ca.crt" -L -m 5 \
    >/dev/null 2>&1 || fail "the mTLS listener answered a client without a certificate"
name0=$(kc -n "$ns" get pod -o jsonpath='{.items[0].metadata.name}' -l app.kubernetes.io/instance=demo --field-selector "status.podIP=$ip")
echo | openssl s_client -connect "$ip:9092" -CAfile "$work/ca.crt" -verify_return_error \
    -verify_hostname "$name0.demo-brokers.$ns.svc" >"$work/sclient" 2>&1 ||
    fail "the internal listener's certificate does not verify for $name0: $(tail -5 "$work/sclient")"
echo "plaintext refused on 9091-9093, no certificate refused on the mTLS listener, internal TLS verified"

# --- 3. the admin API ---------------------------------------------------------------------------
host0="$name0.demo-brokers.$ns.svc"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/ca.crt" --resolve "$host0:9644:$ip" \
    "https://$host0:9644/v1/cluster") || true
[ "$code" = 401 ] || fail "admin API without credentials answered $code, not 401"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/ca.crt" --resolve "$host0:9644:$ip" \
    --cert "$work/client.crt" --key "$work/client.key" "https://$host0:9644/v1/cluster") || true
[ "$code" = 200 ] || fail "admin API with the super user's certificate answered $code, not 200"
echo "admin API: HTTPS, 401 without credentials, 200 for the super user"

# --- 4. a rolling restart gated by /restart-safe over HTTPS ------------------------------------
remember_uids
kc -n "$ns" annotate cluster demo spool.dev/manual-rolling-update=true >/dev/null
wait_rolled 300 || fail "manual rolling restart did not complete (restart-safe over HTTPS)"
echo "manual rolling restart done at $(elapsed)"

# --- 5. cluster CA renewal under acks=all batches -------------------------------------------------
old_ca=$(openssl x509 -in "$work/ca.crt" -noout -fingerprint)
: >"$work/rot.sent"
: >"$work/rot.unknown"
(
    n=0
    while [ ! -e "$work/rot-done" ]; do
        secret_file demo-cluster-ca-cert ca.crt "$work/batch-ca.crt" 2>/dev/null || { sleep 1; continue; }
        b=$(pod_ips | sed 's/$/:9093/' | paste -sd, -)
        seq $((n + 1)) $((n + 50)) | sed 's/^/rot-/' >"$work/batch"
        if kcat -b "$b" $(mtls "$work/batch-ca.crt") -P -t secure-orders -X acks=all \
            -X enable.idempotence=true -X message.timeout.ms=60000 -m 30 <"$work/batch" 2>>"$work/rot.perr"; then
            cat "$work/batch" >>"$work/rot.sent"
        else
            cat "$work/batch" >>"$work/rot.unknown"
        fi
        n=$((n + 50))
        sleep 0.5
    done
) &
producer_pid=$!
sleep 3
remember_uids
kc -n "$ns" annotate secret demo-cluster-ca spool.dev/force-renew=true >/dev/null
deadline=$(($(date +%s) + 900))
while (($(date +%s) < deadline)); do
    secret_file demo-cluster-ca-cert ca.crt "$work/now-ca.crt"
    count=$(grep -c 'BEGIN CERTIFICATE' "$work/now-ca.crt")
    fp=$(openssl x509 -in "$work/now-ca.crt" -noout -fingerprint)
    pending=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.restartPending}')
    [ "$count" = 1 ] && [ "$fp" != "$old_ca" ] && [ -z "$pending" ] && wait_rolled 5 && break
    sleep 3
done
[ "$count" = 1 ] && [ "$fp" != "$old_ca" ] || fail "the CA rotation did not end with only the new CA trusted"
wait_rolled 300 || fail "brokers not rolled after the CA rotation"
touch "$work/rot-done"
wait "$producer_pid" || true
producer_pid=
echo "cluster CA rotated (three staged rolls) at $(elapsed)"
secret_file demo-broker-certs broker.pem "$work/broker.pem"
openssl verify -CAfile "$work/now-ca.crt" <(openssl x509 -in "$work/broker.pem") >/dev/null 2>&1 ||
    fail "the brokers' certificate is not signed by the new CA"
kcat -b "$(pod_ips | sed 's/$/:9093/' | paste -sd, -)" $(mtls "$work/now-ca.crt") -C -t secure-orders \
    -o beginning -e -q -m 30 >"$work/all" 2>"$work/cerr" || fail "consume after rotation: $(tail -5 "$work/cerr")"
grep '^rot-' "$work/all" >"$work/rot.read" || true
lost=$(comm -23 <(sort -u "$work/rot.sent") <(sort -u "$work/rot.read") | wc -l)
dup=$(sort "$work/rot.read" | uniq -d | wc -l)
echo "rotation: $(wc -l <"$work/rot.sent") acknowledged, $(wc -l <"$work/rot.unknown") in failed batches, $(wc -l <"$work/rot.read") read: $lost lost, $dup duplicated"
((lost == 0 && dup == 0)) || fail "records lost or duplicated during the CA rotation"
[ -s "$work/rot.sent" ] || fail "no batch was acknowledged during the rotation"
echo "PASS: secured Cluster Ready, mTLS produce/consume, plaintext refused, Topic reconciled, HTTPS admin API, rolls gated over HTTPS, CA rotated with 0 acknowledged records lost"
