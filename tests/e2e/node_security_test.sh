#!/usr/bin/env bash
# e2e test on the real node (fixture: node_fixture.sh): a Cluster with spec.security (issue #34).
#
#   1. helm install with the chart's etcd, 3 members over TLS (peer and client certificates of
#      the etcd CA the chart makes; the operator signs the brokers' client certificate): etcd
#      refuses plaintext, a TLS client without a certificate and one of another CA, and answers
#      the brokers' certificate. A 3-broker Cluster whose internal listener is SASL_SSL
#      (SCRAM-SHA-512) and whose POD listener is mTLS (client certificates of the clients CA)
#      turns Ready: the brokers replicate over the REPLICATION listener with certificates of the
#      cluster CA, which the operator keeps in Secrets.
#   2. kcat on the host, with a client certificate signed by the clients CA (CN=e2e-client, a
#      super user), produces 500 records with acks=all to a 3-replica topic through the POD
#      listener, verifying the brokers' certificates and their pod IPs against the cluster CA,
#      and consumes them back, all of them. Plaintext is refused on every Kafka port, TLS
#      without a client certificate on the mTLS one; the internal listener's certificate
#      verifies for the pod's DNS name.
#   2b. One etcd member down (the StatefulSet scaled to 2) under acks=all batches: the broker
#      leading partition 0 is killed and another takes the leadership (a metadata write on the
#      remaining two members); the member comes back; every acknowledged record is read back.
#   2c. A User with SCRAM-SHA-512 and ACLs on secure-orders: Kafka's Java console producer and
#      consumer, in a pod inside the cluster, produce and read back 100 records through the
#      bootstrap Service with the User Secret's sasl.jaas.config over SASL_SSL.
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
pvs=("$ns-etcd-0" "$ns-etcd-1" "$ns-etcd-2" "$ns-data-0" "$ns-data-1" "$ns-data-2")
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
    kc delete namespace "$ns-java" --wait=false >/dev/null 2>&1
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
# batches PREFIX: acks=all batches of 50 records (PREFIX-1, ...) through the POD listener, each
# trusting the cluster CA bundle published then, until $work/PREFIX-done exists; acknowledged
# batches go to $work/PREFIX.sent, failed ones to $work/PREFIX.unknown.
batches() {
    local prefix=$1 n=0 b
    : >"$work/$prefix.sent"
    : >"$work/$prefix.unknown"
    while [ ! -e "$work/$prefix-done" ]; do
        secret_file demo-cluster-ca-cert ca.crt "$work/$prefix.batch-ca.crt" 2>/dev/null || { sleep 1; continue; }
        b=$(pod_ips | sed 's/$/:9093/' | paste -sd, -)
        seq $((n + 1)) $((n + 50)) | sed "s/^/$prefix-/" >"$work/$prefix.batch"
        if kcat -b "$b" $(mtls "$work/$prefix.batch-ca.crt") -P -t secure-orders -X acks=all \
            -X enable.idempotence=true -X message.timeout.ms=60000 -m 30 <"$work/$prefix.batch" \
            2>>"$work/$prefix.perr"; then
            cat "$work/$prefix.batch" >>"$work/$prefix.sent"
        else
            cat "$work/$prefix.batch" >>"$work/$prefix.unknown"
        fi
        n=$((n + 50))
        sleep 0.5
    done
}
# check_batches PREFIX WHAT ALL: every acknowledged PREFIX record is in ALL (the topic read from
# the beginning) exactly once, and some batch was acknowledged.
check_batches() {
    local prefix=$1 what=$2 all=$3 lost dup
    grep "^$prefix-" "$all" >"$work/$prefix.read" || true
    lost=$(comm -23 <(sort -u "$work/$prefix.sent") <(sort -u "$work/$prefix.read") | wc -l)
    dup=$(sort "$work/$prefix.read" | uniq -d | wc -l)
    echo "$what: $(wc -l <"$work/$prefix.sent") acknowledged, $(wc -l <"$work/$prefix.unknown") in failed batches, $(wc -l <"$work/$prefix.read") read: $lost lost, $dup duplicated"
    ((lost == 0 && dup == 0)) || fail "records lost or duplicated $what"
    [ -s "$work/$prefix.sent" ] || fail "no batch was acknowledged $what"
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
for i in 0 1 2; do host_pv "$ns-etcd-$i" "$ns" "data-$release-etcd-$i"; done
for i in 0 1 2; do host_pv "$ns-data-$i" "$ns" "data-demo-$i"; done
install_operator "$release" --set etcd.replicas=3 ||
    fail "helm install (operator and a 3-member etcd) did not become ready"
echo "operator and 3 etcd members (TLS) Ready at $(elapsed)"
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

# --- 1b. etcd: https with client certificates ---------------------------------------------------
kc -n "$ns" get configmap demo-config -o jsonpath='{.data.broker\.yaml}' >"$work/broker.yaml"
grep -q 'etcd.tls.required: "true"' "$work/broker.yaml" || fail "brokers do not require etcd TLS"
[ "$(grep -o 'https://[^,"]*:2379' "$work/broker.yaml" | wc -l)" = 3 ] ||
    fail "brokers are not given the 3 https etcd members: $(grep etcd.endpoints "$work/broker.yaml")"
secret_file demo-etcd-client ca.crt "$work/etcd-ca.crt"
secret_file demo-etcd-client tls.crt "$work/etcd-client.crt"
secret_file demo-etcd-client tls.key "$work/etcd-client.key"
etcd0="$release-etcd-0.$release-etcd.$ns.svc"
etcd_ip=$(kc -n "$ns" get pod "$release-etcd-0" -o jsonpath='{.status.podIP}')
etcd_curl() { curl -sS --max-time 5 --resolve "$etcd0:2379:$etcd_ip" --cacert "$work/etcd-ca.crt" "$@"; }
! curl -sS --max-time 5 "http://$etcd_ip:2379/health" >/dev/null 2>&1 || fail "etcd answered plaintext"
! etcd_curl "https://$etcd0:2379/health" >/dev/null 2>&1 || fail "etcd answered a client without a certificate"
secret_file demo-clients-ca ca.crt "$work/other-ca.crt"
secret_file demo-clients-ca ca.key "$work/other-ca.key"
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=intruder \
    -keyout "$work/intruder.key" -out "$work/intruder.csr" 2>/dev/null
openssl x509 -req -in "$work/intruder.csr" -CA "$work/other-ca.crt" -CAkey "$work/other-ca.key" \
    -CAcreateserial -days 1 -out "$work/intruder.crt" 2>/dev/null
! etcd_curl --cert "$work/intruder.crt" --key "$work/intruder.key" "https://$etcd0:2379/health" \
    >/dev/null 2>&1 || fail "etcd answered a certificate of another CA"
etcd_curl --cert "$work/etcd-client.crt" --key "$work/etcd-client.key" "https://$etcd0:2379/health" \
    >"$work/etcd-health" 2>&1 || fail "etcd refused the brokers' certificate: $(cat "$work/etcd-health")"
grep -q '"health":"true"' "$work/etcd-health" || fail "etcd unhealthy: $(cat "$work/etcd-health")"
etcd_members() {
    etcd_curl --cert "$work/etcd-client.crt" --key "$work/etcd-client.key" -X POST -d '{}' \
        "https://$etcd0:2379/v3/cluster/member/list" | grep -o '"clientURLs":\["https://[^"]*"' | wc -l
}
[ "$(etcd_members)" = 3 ] || fail "etcd does not list 3 members with https client URLs"
# The backup of docs/securing-a-cluster.md: etcdctl in a member with the member's certificate.
kc -n "$ns" exec "$release-etcd-0" -- etcdctl --endpoints=https://localhost:2379 \
    --cacert=/etc/etcd-tls/ca.crt --cert=/etc/etcd-tls/tls.crt --key=/etc/etcd-tls/tls.key \
    snapshot save /var/lib/etcd/snapshot.db >"$work/snap" 2>&1 || fail "etcdctl snapshot save: $(tail -3 "$work/snap")"
# etcdutl (the restore side) reads it: the image's etcd 3.7 tools are both there.
kc -n "$ns" exec "$release-etcd-0" -- etcdutl snapshot status /var/lib/etcd/snapshot.db \
    >"$work/snap-status" 2>&1 || fail "etcdutl snapshot status: $(tail -3 "$work/snap-status")"
echo "etcd: 3 https members; plaintext, no certificate and another CA's certificate refused; the brokers' certificate answered"

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

# --- 2b. one etcd member down under acks=all batches, a leadership change meanwhile -------------
leader0() {
    kcat -b "$bootstrap" $(mtls "$work/ca.crt") -L -t secure-orders -m 10 2>/dev/null |
        sed -n 's/^ *partition 0, leader \([0-9]*\),.*/\1/p'
}
batches etcd &
producer_pid=$!
sleep 2
kc -n "$ns" scale statefulset "$release-etcd" --replicas=2 >/dev/null
kc -n "$ns" wait --for=delete "pod/$release-etcd-2" --timeout 60s >/dev/null ||
    fail "etcd member 2 did not stop"
echo "etcd member 2 down at $(elapsed)"
old_leader=$(leader0)
[ -n "$old_leader" ] || fail "no leader for secure-orders partition 0"
killed_uid=$(kc -n "$ns" get pod "demo-$old_leader" -o jsonpath='{.metadata.uid}')
kc -n "$ns" delete pod "demo-$old_leader" --grace-period=0 --force >/dev/null 2>&1
deadline=$(($(date +%s) + 120))
until new_leader=$(leader0) && [ -n "$new_leader" ] && [ "$new_leader" != "$old_leader" ]; do
    (($(date +%s) < deadline)) || fail "partition 0 kept leader $old_leader with an etcd member down"
    sleep 1
done
echo "partition 0 leadership moved $old_leader -> $new_leader with 2 of 3 etcd members at $(elapsed)"
deadline=$(($(date +%s) + 180))
until uid=$(kc -n "$ns" get pod "demo-$old_leader" -o jsonpath='{.metadata.uid}' 2>/dev/null) &&
    [ -n "$uid" ] && [ "$uid" != "$killed_uid" ] &&
    kc -n "$ns" wait --for=condition=Ready "pod/demo-$old_leader" --timeout 5s >/dev/null 2>&1; do
    (($(date +%s) < deadline)) || fail "broker $old_leader did not come back with 2 etcd members"
    sleep 2
done
echo "broker $old_leader back (Ready) with 2 etcd members at $(elapsed)"
kc -n "$ns" scale statefulset "$release-etcd" --replicas=3 >/dev/null
kc -n "$ns" rollout status statefulset "$release-etcd" --timeout 120s >/dev/null ||
    fail "etcd member 2 did not rejoin"
[ "$(etcd_members)" = 3 ] || fail "etcd does not list 3 members after member 2 rejoined"
kc -n "$ns" wait --for=condition=Ready cluster/demo --timeout 120s >/dev/null || fail "Cluster not Ready after the etcd member's return"
sleep 2
touch "$work/etcd-done"
wait "$producer_pid" || true
producer_pid=
# The restarted broker has a new pod IP, which its certificate carries once the kubelet has
# updated the mounted Secret: until then a consume from it fails verification.
mapfile -t ips < <(pod_ips)
bootstrap=$(printf '%s:9093,' "${ips[@]}")
bootstrap=${bootstrap%,}
deadline=$(($(date +%s) + 180))
until timeout 60 kcat -b "$bootstrap" $(mtls "$work/ca.crt") -C -t secure-orders -o beginning -e -q \
    -m 30 >"$work/etcd.all" 2>"$work/cerr"; do
    (($(date +%s) < deadline)) || fail "consume after the etcd member's loss: $(tail -5 "$work/cerr")"
    sleep 3
done
check_batches etcd "with an etcd member down" "$work/etcd.all"

# --- 2c. a SCRAM User and Kafka's Java client inside the cluster ---------------------------------
kc apply -f - >/dev/null <<YAML
apiVersion: spool.dev/v1alpha1
kind: User
metadata: {name: java-app, namespace: $ns}
spec:
  cluster: demo
  authentication: {type: scram-sha-512}
  authorization:
    type: simple
    acls:
      - resource: {type: topic, name: secure-orders, patternType: literal}
        operations: [Read, Write, Describe]
      - resource: {type: group, name: java-, patternType: prefix}
        operations: [Read]
YAML
kc -n "$ns" wait --for=condition=Ready user/java-app --timeout 120s >/dev/null ||
    fail "User java-app not Ready: $(kc -n "$ns" get user java-app -o jsonpath='{.status}')"
jaas=$(kc -n "$ns" get secret java-app -o 'jsonpath={.data.sasl\.jaas\.config}' | base64 -d)
[ -n "$jaas" ] || fail "Secret java-app has no sasl.jaas.config"
# The Java runtime and Kafka's jars are the host's (hostPath: the test node is this machine), so
# the pod runs in a namespace without the restricted Pod Security level.
kafka=$("$SRC/scripts/peers/fetch-kafka.sh") || fail "scripts/peers/fetch-kafka.sh failed"
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
[ -x "$jdk/bin/java" ] || fail "no Java runtime on the host"
kc create namespace "$ns-java" >/dev/null
kc -n "$ns-java" create configmap client --from-file=ca.crt="$work/ca.crt" \
    --from-literal=client.properties="security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
ssl.truststore.type=PEM
ssl.truststore.location=/cfg/ca.crt
acks=all
sasl.jaas.config=$jaas
" >/dev/null
kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: java-client, namespace: $ns-java}
spec:
  restartPolicy: Never
  containers:
    - name: java
      image: docker.io/library/debian:12-slim
      imagePullPolicy: Never
      command: [/bin/sh, -ec]
      args:
        - |
          j() { $jdk/bin/java -Xshare:auto -XX:TieredStopAtLevel=1 -cp '/kafka/libs/*' "\$@"; }
          b=demo-bootstrap.$ns.svc:9092
          seq 1 100 | sed 's/^/java-/' | j org.apache.kafka.tools.ConsoleProducer \
              --bootstrap-server \$b --topic secure-orders --producer.config /cfg/client.properties
          j org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server \$b \
              --topic secure-orders --group java-readers --from-beginning --timeout-ms 10000 \
              --consumer.config /cfg/client.properties >/tmp/read || true
          echo "read \$(grep -c '^java-' /tmp/read) java records"
      volumeMounts:
        - {name: jdk, mountPath: $jdk, readOnly: true}
        - {name: jdk-conf, mountPath: /etc/java-17-openjdk, readOnly: true}
        - {name: kafka, mountPath: /kafka, readOnly: true}
        - {name: cfg, mountPath: /cfg, readOnly: true}
  volumes:
    - {name: jdk, hostPath: {path: $jdk, type: Directory}}
    - {name: jdk-conf, hostPath: {path: /etc/java-17-openjdk, type: Directory}}
    - {name: kafka, hostPath: {path: $kafka, type: Directory}}
    - {name: cfg, configMap: {name: client}}
YAML
deadline=$(($(date +%s) + 180))
until phase=$(kc -n "$ns-java" get pod java-client -o jsonpath='{.status.phase}') &&
    [[ "$phase" == Succeeded || "$phase" == Failed ]]; do
    (($(date +%s) < deadline)) || fail "the Java client pod did not finish: $(kc -n "$ns-java" logs java-client --tail 20 2>&1)"
    sleep 2
done
kc -n "$ns-java" logs java-client >"$work/java.log" 2>&1 || true
[ "$phase" = Succeeded ] && grep -qx 'read 100 java records' "$work/java.log" ||
    fail "Java client with the SCRAM User ($phase): $(tail -20 "$work/java.log")"
echo "Java client in the cluster (SCRAM User java-app, SASL_SSL): 100 produced with acks=all, 100 read back at $(elapsed)"

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
batches rot &
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
check_batches rot "during the CA rotation" "$work/all"
echo "PASS: etcd over TLS (3 members, client certificates), an etcd member down with 0 records lost, a SCRAM User with the Java client in the cluster, secured Cluster Ready, mTLS produce/consume, plaintext refused, Topic reconciled, HTTPS admin API, rolls gated over HTTPS, CA rotated with 0 acknowledged records lost"
