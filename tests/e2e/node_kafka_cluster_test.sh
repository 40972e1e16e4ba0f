#!/usr/bin/env bash
# e2e test on the real node (fixture: node_fixture.sh): the operator makes three broker pods one
# Kafka cluster, and nothing acknowledged is lost while it rolls them.
#
#   1. `helm install` of charts/spool with its etcd (the etcd image from the Dockerfile, on a
#      hostPath PersistentVolume), in a namespace that enforces Pod Security `restricted`.
#   2. A Cluster of 3 brokers turns Ready; a Topic (3 partitions, RF=3, min.insync.replicas=2)
#      turns Ready. Metadata asked of each broker shows the same 3 brokers, the same one
#      controller and every partition on 3 distinct brokers: one cluster, the topic created once.
#   3. A client pod in the cluster (Debian's kcat, the Dockerfile's kcat image) produces RECORDS
#      records with acks=all through the bootstrap Service and a consumer group reads them back;
#      from the host, kcat does the same through the brokers' POD listener, advertised on the pod
#      IPs (the host reaches pod addresses over the bridge but cannot resolve cluster names).
#      Every record is read exactly once.
#   3a. node_journey_topics.sh, after the clients: the node's zone as every broker's rack, a
#      Topic's default replication factor from the Cluster, a replication-factor change 1 -> 3
#      with its records kept, and a spec.config value the broker would refuse refused before
#      anything rolls.
#   4. A config change rolls the brokers one at a time, each only when the operator has the
#      broker's /restart-safe say so, while the client pod produces steadily with acks=all
#      (idempotent, retrying through the leader moves): at most one broker is ever not Ready,
#      no partition is without a live leader for as long as the failure-detection timeout,
#      every broker restarts with the new config, and every acknowledged record is in the topic
#      exactly once.
#   5. node_journey_lifecycle.sh: a broker pod killed with --force catches up, Topic deletion
#      with Delete and Retain, and helm uninstall leaves nothing but the claims.
set -euo pipefail
source "$(dirname "$0")/node_lib.sh"
source "$(dirname "$0")/node_journey_external.sh"
source "$(dirname "$0")/node_journey_scale.sh"
source "$(dirname "$0")/node_journey_topics.sh"
source "$(dirname "$0")/node_journey_lifecycle.sh"
use_helm
RECORDS=${RECORDS:-2000}
ROLL_RATE=${ROLL_RATE:-50} # records per second while the brokers roll
ns="node-kafka-$$" release="kc-$$"
pvs=("$ns-etcd" "$ns-data-0" "$ns-data-1" "$ns-data-2" "$ns-data-3" "$ns-data-4")
t_begin=$(date +%s%N)
elapsed() { echo "$((($(date +%s%N) - t_begin) / 1000000)) ms"; }
fail() {
    echo "FAIL: $*" >&2
    kc -n "$ns" get cluster,topic,statefulset,pods,pvc -o wide >&2 || true
    kc -n "$ns" get cluster demo -o jsonpath='{.status}' >&2 || true
    echo >&2
    kc -n "$ns" get events --sort-by=.lastTimestamp 2>/dev/null | tail -30 >&2 || true
    kc -n "$ns" logs "deploy/$release-operator" --tail 40 >&2 || true
    for i in 0 1 2; do
        echo "--- demo-$i" >&2
        kc -n "$ns" logs "demo-$i" --tail 20 >&2 || true
    done
    exit 1
}
cleanup() {
    # Under set -e a failing command here would end the cleanup and become the test's status.
    set +e
    [ -z "${producer_pid:-}" ] || kill "$producer_pid" 2>/dev/null
    [ -z "${sampler_pid:-}" ] || kill "$sampler_pid" 2>/dev/null
    kc -n "$ns" delete topic --all --timeout 60s >/dev/null 2>&1
    kc -n "$ns" delete cluster demo --timeout 60s >/dev/null 2>&1
    # The journey ends with helm uninstall: the release may be gone already.
    if hm status "$release" -n "$ns" >/dev/null 2>&1; then hm uninstall "$release" -n "$ns" >/dev/null 2>&1; fi
    kc delete namespace "$ns" --wait=false >/dev/null 2>&1
    kc label node --all topology.kubernetes.io/zone- >/dev/null 2>&1
    for pv in "${pvs[@]}"; do
        kc delete pv "$pv" --wait=false >/dev/null 2>&1
        rm -rf "${DIR:?}/volumes/$pv"
    done
    external_cleanup
    rm -rf "$work"
}
trap cleanup EXIT

# exactly_once WHAT SENT RECEIVED: every line of SENT is in RECEIVED once, and nothing else.
exactly_once() {
    local lost dup extra
    lost=$(comm -23 <(sort -u "$2") <(sort -u "$3") | wc -l)
    dup=$(sort "$3" | uniq -d | wc -l)
    extra=$(comm -13 <(sort -u "$2") <(sort -u "$3") | wc -l)
    echo "$1: $(wc -l <"$2") sent, $(wc -l <"$3") read: $lost lost, $dup duplicated, $extra unknown"
    ((lost == 0 && dup == 0 && extra == 0)) || fail "$1: records lost or duplicated"
}

# --- 1. the chart, with its etcd ------------------------------------------------------------
kc create namespace "$ns" >/dev/null
# The node's zone, which Kubernetes copies onto every pod it binds there (node_journey_topics.sh).
kc label node --all topology.kubernetes.io/zone=zone-a --overwrite >/dev/null
kc label namespace "$ns" pod-security.kubernetes.io/enforce=restricted >/dev/null
host_pv "$ns-etcd" "$ns" "data-$release-etcd-0"
external_storage_setup
for i in 0 1 2 3 4; do host_pv "$ns-data-$i" "$ns" "data-demo-$i" "$CLUSTER_STORAGE_CLASS"; done
install_operator "$release" || fail "helm install (operator and etcd) did not become ready"
[ "$(kc -n "$ns" get pvc "data-$release-etcd-0" -o jsonpath='{.spec.volumeName}')" = "$ns-etcd" ] ||
    fail "etcd's claim is not bound to its PersistentVolume"
echo "helm install: operator and etcd Ready at $(elapsed)"

# --- 2. three brokers, one cluster; a topic created once ------------------------------------
apply_cluster 3 "podAddressListener: {enabled: true}" \
    "resources: {requests: {cpu: 100m, memory: 128Mi}}" "externalListener: {type: NodePort}"
kc -n "$ns" wait --for=condition=Ready cluster/demo --timeout 180s >/dev/null ||
    fail "Cluster demo not Ready"
echo "Cluster demo (3 brokers) Ready at $(elapsed)"
# The brokers registered in the chart's etcd, whose data is on its claimed volume.
[ -d "$DIR/volumes/$ns-etcd/data/member" ] || fail "etcd wrote no member data on its volume"
grep -q 'etcd.prefix: "/spool/'"$ns"'/demo"' <(kc -n "$ns" get configmap demo-config \
    -o jsonpath='{.data.broker\.yaml}') || fail "broker.yaml does not name the Cluster's etcd prefix"
kc apply -f - >/dev/null <<YAML
apiVersion: spool.dev/v1alpha1
kind: Topic
metadata: {name: orders, namespace: $ns}
spec:
  clusterRef: {name: demo}
  partitions: 3
  replicationFactor: 3
  config: {min.insync.replicas: "2"}
YAML
kc -n "$ns" wait --for=condition=Ready topic/orders --timeout 120s >/dev/null ||
    fail "Topic orders not Ready: $(kc -n "$ns" get topic orders -o jsonpath='{.status}')"
echo "Topic orders Ready at $(elapsed)"

pod_ips() { kc -n "$ns" get pods -l app.kubernetes.io/instance=demo \
    -o jsonpath='{range .items[*]}{.status.podIP}{"\n"}{end}' | sort; }
mapfile -t ips < <(pod_ips)
((${#ips[@]} == 3)) || fail "expected 3 broker pod IPs, got ${ips[*]}"
host_bootstrap=$(printf '%s:9093,' "${ips[@]}")
host_bootstrap=${host_bootstrap%,}
# kcat -L of each broker: its brokers (with the controller marked) and the topic's replicas.
for ip in "${ips[@]}"; do
    kcat -b "$ip:9093" -L -t orders -m 30 >"$work/md-$ip" 2>&1 || fail "kcat -L $ip: $(cat "$work/md-$ip")"
    grep -E '^ +broker [0-9]+ at ' "$work/md-$ip" | sort >"$work/brokers-$ip"
    grep -E '^ +partition [0-9]+, ' "$work/md-$ip" |
        sed -E 's/, isrs: .*//; s/leader [0-9]+, //' | sort >"$work/replicas-$ip"
done
first=${ips[0]}
for ip in "${ips[@]}"; do
    diff -q "$work/brokers-$first" "$work/brokers-$ip" >/dev/null ||
        fail "brokers differ: $first sees $(cat "$work/brokers-$first"), $ip sees $(cat "$work/brokers-$ip")"
    diff -q "$work/replicas-$first" "$work/replicas-$ip" >/dev/null ||
        fail "replicas of orders differ between $first and $ip"
done
[ "$(wc -l <"$work/brokers-$first")" = 3 ] || fail "not 3 brokers: $(cat "$work/md-$first")"
[ "$(grep -c '(controller)' "$work/brokers-$first")" = 1 ] ||
    fail "not exactly one controller: $(cat "$work/brokers-$first")"
for i in 0 1 2; do
    grep -q "broker $i at 10\.244\.7\.[0-9]*:9093" "$work/brokers-$first" ||
        fail "node $i (pod ordinal) is not advertised on a pod IP: $(cat "$work/brokers-$first")"
done
[ "$(wc -l <"$work/replicas-$first")" = 3 ] || fail "orders has not 3 partitions: $(cat "$work/md-$first")"
while read -r line; do
    replicas=${line##*replicas: }
    [ "$(tr ',' '\n' <<<"$replicas" | sort -u | wc -l)" = 3 ] || fail "not on 3 brokers: $line"
done <"$work/replicas-$first"
echo "metadata: every broker sees brokers 0,1,2, controller $(grep -o 'broker [0-9]* at [^ ]* (controller)' \
    "$work/brokers-$first" | cut -d' ' -f2), orders' 3 partitions on 3 brokers each"

# --- 3. clients in the cluster and on the host ----------------------------------------------
kc -n "$ns" apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: client}
spec:
  terminationGracePeriodSeconds: 1
  securityContext: {runAsNonRoot: true, runAsUser: 10001, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: kcat
    image: localhost/spool-kcat:e2e
    imagePullPolicy: Never
    command: [sleep, infinity]
    securityContext: {readOnlyRootFilesystem: true, allowPrivilegeEscalation: false,
                      capabilities: {drop: [ALL]}}
YAML
kc -n "$ns" wait --for=condition=Ready pod/client --timeout 60s >/dev/null || fail "client pod not Ready"
bootstrap=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.bootstrap}')
in_pod() { kc -n "$ns" exec -i client -- "$@"; }
# produce_and_consume WHAT BOOTSTRAP TOTAL RUNNER...: RECORDS records ($work/WHAT.sent) with
# acks=all, then a new consumer group reads the topic's TOTAL records from the start; this
# phase's records must be among them exactly once.
produce_and_consume() {
    local what="$1" b="$2" total="$3"
    shift 3
    seq 1 "$RECORDS" | sed "s/^/$what-/" >"$work/$what.sent"
    local t0; t0=$(date +%s%N)
    "$@" kcat -b "$b" -P -t orders -X acks=all -m 30 <"$work/$what.sent" 2>"$work/$what.perr" ||
        fail "$what: produce failed: $(tail -5 "$work/$what.perr")"
    local t1; t1=$(date +%s%N)
    "$@" timeout 90 kcat -b "$b" -G "group-$what" -X auto.offset.reset=earliest -c "$total" \
        -q -f '%s\n' orders >"$work/$what.all" 2>"$work/$what.cerr" || true
    grep "^$what-" "$work/$what.all" >"$work/$what.read" || true
    echo "$what: $RECORDS records produced in $(((t1 - t0) / 1000000)) ms"
    exactly_once "$what (consumer group group-$what)" "$work/$what.sent" "$work/$what.read"
}
produce_and_consume in-cluster "$bootstrap" "$RECORDS" in_pod
produce_and_consume host "$host_bootstrap" "$((2 * RECORDS))" env
external_journey
echo "clients done at $(elapsed)"
journey_topics
echo "topics done at $(elapsed)"
journey_scale

# --- 4. a config roll under steady acks=all load --------------------------------------------
declare -A uid_before
for i in 0 1 2; do uid_before[$i]=$(kc -n "$ns" get pod "demo-$i" -o jsonpath='{.metadata.uid}'); done
hash_before=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.configHash}')
# The producer reads its records from a pipe at ROLL_RATE per second; the idempotent producer
# retries through leader moves (message.timeout.ms covers the whole roll). kcat gives up when
# every broker connection is down at once ("All broker connections are down: terminating"),
# which a sparse client (connected only to the leaders it needs) is for a moment whenever the
# one broker that leads everything - the last one rolled leads it all - restarts: it keeps a
# connection to every broker instead (enable.sparse.connections=false).
: >"$work/roll.sent"
: >"$work/roll.unknown"
: >"$work/roll.restarts"
# kcat also quits, now and then, when the last broker it knows restarts while its other
# connections wait out their reconnect backoff (librdkafka raises ALL_BROKERS_DOWN; kcat treats
# it as fatal, where an application's producer would go on). The records of such a run are
# neither acknowledged nor refused: they count as unknown (each may be in the log once, never
# twice), a new kcat takes over, and every record of a run that ended normally must be there
# exactly once. At most 4 such restarts are accepted; each is reported.
# A restarted kcat knows only its bootstrap list until its first Metadata answer. The client
# Service alone is a single point there: a SYN that kube-proxy sent to a pod IP the roll has just
# retired stays pinned to it by conntrack until the 30 s connection-setup timeout, and kcat, with
# 1/1 brokers down, quits again (seen in stop 23's CI and here). So the list also names each
# broker's stable DNS name (the headless Service publishes not-ready addresses), as a client
# outside the roll's path would be configured.
roll_bootstrap=$bootstrap
for i in 0 1 2; do roll_bootstrap+=",demo-$i.demo-brokers.$ns.svc:9092"; done
(
    set +e # this subshell reads each kcat's status itself
    run=0 i=0
    while [ ! -e "$work/stop" ] && ((run < 5)); do
        run=$((run + 1))
        : >"$work/roll.sent.$run"
        (
            while [ ! -e "$work/stop" ] && ((i < 100000)); do
                i=$((i + 1))
                echo "roll-$run-$i" >>"$work/roll.sent.$run"
                echo "roll-$run-$i"
                sleep "$(awk "BEGIN {print 1 / $ROLL_RATE}")"
            done
        ) | in_pod kcat -b "$roll_bootstrap" -P -t orders -X acks=all -X enable.idempotence=true \
            -X enable.sparse.connections=false -X message.timeout.ms=300000 -X linger.ms=5 -m 30 \
            2>"$work/roll.perr.$run"
        rc=${PIPESTATUS[1]}
        cat "$work/roll.perr.$run" >>"$work/roll.perr"
        if ((rc == 0)); then
            cat "$work/roll.sent.$run" >>"$work/roll.sent"
            exit 0
        fi
        grep -q 'All broker connections are down' "$work/roll.perr.$run" || exit "$rc"
        cat "$work/roll.sent.$run" >>"$work/roll.unknown"
        echo "run $run: $(grep -o 'All broker connections are down[^%]*' "$work/roll.perr.$run" | head -1)" \
            >>"$work/roll.restarts"
    done
    exit 1
) &
producer_pid=$!
sleep 3
roll_start=$(date +%s%N)
kc -n "$ns" patch cluster demo --type merge \
    -p '{"spec":{"config":{"log.retention.ms":"86400000"}}}' >/dev/null
max_not_ready=0 rolled=0
declare -A reasons_seen
# The leader sampler: Metadata from the brokers' current pod IPs every 0.2 s, one line per
# sample: "<ms> <live broker ids,> <leader of partition 0> <1> <2>" (kcat prints -1 for none).
(
    while [ ! -e "$work/roll-done" ]; do
        b=$(pod_ips | sed 's/$/:9093/' | paste -sd, -)
        if [ -n "$b" ] && kcat -b "$b" -L -t orders -m 2 >"$work/roll-md" 2>/dev/null; then
            live=$(grep -oE '^ +broker [0-9]+' "$work/roll-md" | awk '{print $2}' | paste -sd, -)
            leaders=$(grep -E '^ +partition [0-9]+, leader' "$work/roll-md" | sort -k2n |
                sed -E 's/.*leader (-?[0-9]+),.*/\1/' | paste -sd' ' -)
            echo "$(($(date +%s%N) / 1000000)) $live $leaders"
        fi
        sleep 0.2
    done
) >"$work/leaders" &
sampler_pid=$!
deadline=$(($(date +%s) + 300))
while (($(date +%s) < deadline)); do
    not_ready=$(kc -n "$ns" get pods -l app.kubernetes.io/instance=demo \
        -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
        grep -vc True || true)
    # A pod being replaced can be missing from the list for a moment.
    present=$(kc -n "$ns" get pods -l app.kubernetes.io/instance=demo -o name | wc -l)
    not_ready=$((not_ready + 3 - present))
    ((not_ready > max_not_ready)) && max_not_ready=$not_ready
    rolled=0
    for i in 0 1 2; do
        uid=$(kc -n "$ns" get pod "demo-$i" -o jsonpath='{.metadata.uid}' 2>/dev/null || true)
        [ -n "$uid" ] && [ "$uid" != "${uid_before[$i]}" ] && rolled=$((rolled + 1))
    done
    pending=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.restartPending}')
    for r in $(kc -n "$ns" get cluster demo -o jsonpath='{.status.conditions[*].reason}'); do
        reasons_seen[$r]=1
    done
    ready=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')
    ((rolled == 3)) && [ -z "$pending" ] && [ "$ready" = True ] && ((not_ready == 0)) && break
    sleep 0.5
done
roll_end=$(date +%s%N)
touch "$work/roll-done"
wait "$sampler_pid" || true
sampler_pid=
# The longest run of samples in which a partition's leader was -1 or not a live broker.
read -r metadata_samples max_leaderless_ms < <(awk '
    { split($2, live, ","); ok = ""; for (i in live) ok = ok "," live[i] ","
      for (p = 0; p < 3; p++) {
          leader = $(3 + p)
          if (leader == "" || leader == -1 || index(ok, "," leader ",") == 0) {
              if (!(p in since)) since[p] = $1
              if ($1 - since[p] > max) max = $1 - since[p]
          } else delete since[p]
      } }
    END { print NR, max + 0 }' "$work/leaders")
((rolled == 3)) || fail "only $rolled of 3 brokers restarted for the config change"
((max_not_ready <= 1)) || fail "$max_not_ready brokers were not Ready at once during the roll"
# broker.session.timeout.ms (9 s): the time a dead leader may go unnoticed; a controlled
# shutdown hands leaderships over before the broker stops, so a roll should need none of it.
((metadata_samples > 20)) || fail "only $metadata_samples Metadata samples during the roll"
((max_leaderless_ms < 9000)) ||
    fail "a partition of orders had no live leader for $max_leaderless_ms ms during the roll"
[ "$(kc -n "$ns" get cluster demo -o jsonpath='{.status.configHash}')" != "$hash_before" ] ||
    fail "status.configHash did not change"
echo "roll: 3 brokers restarted one at a time in $(((roll_end - roll_start) / 1000000)) ms" \
    "(at most $max_not_ready not Ready; longest without a live leader $max_leaderless_ms ms" \
    "in $metadata_samples Metadata samples; Cluster condition reasons seen: ${!reasons_seen[*]})"
sleep 3
touch "$work/stop"
wait "$producer_pid" ||
    fail "the producer failed during the roll: $(tail -5 "$work/roll.perr"); kcat restarts: $(paste -sd';' "$work/roll.restarts")"
producer_pid=
# kcat reports each record whose delivery failed ("Delivery failed for message"); none did, and
# it exits only once every record is acknowledged (acks=all) or failed: all of roll.sent is acked.
if grep -q 'Delivery failed' "$work/roll.perr"; then
    fail "the producer reports failed deliveries: $(grep 'Delivery failed' "$work/roll.perr" | sort | uniq -c | head -5)"
fi
# The operator restarted each pod itself, each after the broker's /restart-safe said so (the
# event carries the broker's verdict).
restarts=$(kc -n "$ns" get events --field-selector reason=RollingRestart -o jsonpath='{.items[*].message}')
for i in 0 1 2; do
    [[ "$restarts" == *"restarted demo-$i for the new configuration (broker $i: safe: "* ]] ||
        fail "no RollingRestart event with broker $i's restart-safe verdict: $restarts"
done
mapfile -t ips < <(pod_ips)
host_bootstrap=$(printf '%s:9093,' "${ips[@]}")
host_bootstrap=${host_bootstrap%,}
timeout 90 kcat -b "$host_bootstrap" -C -t orders -o beginning -e -q -f '%s\n' -m 30 \
    >"$work/final.all" 2>"$work/final.err" || fail "reading orders back: $(tail -5 "$work/final.err")"
grep '^roll-' "$work/final.all" >"$work/roll.all" || true
# The unknown records of a kcat that quit: at most once each, and then out of the check below.
# (grep finds nothing when no kcat quit: not an error under pipefail.)
unknown_dup=$({ grep -Fx -f "$work/roll.unknown" "$work/roll.all" || true; } | sort | uniq -d | wc -l)
((unknown_dup == 0)) || fail "records of a producer that quit were written twice"
grep -v -Fx -f "$work/roll.unknown" "$work/roll.all" >"$work/roll.read" || true
[ ! -s "$work/roll.restarts" ] ||
    echo "roll: kcat quit and was restarted: $(paste -sd';' "$work/roll.restarts")" \
        "($(wc -l <"$work/roll.unknown") records of those runs unknown, none written twice)"
exactly_once "roll (acks=all during the roll)" "$work/roll.sent" "$work/roll.read"
grep '^in-cluster-' "$work/final.all" >"$work/in-cluster.after" || true
exactly_once "in-cluster records after the roll" "$work/in-cluster.sent" "$work/in-cluster.after"
storage_journey
lifecycle_journey # 5. pod kill, Topic deletion, helm uninstall (must stay the last step)
echo "PASS: 3 brokers are one cluster (one etcd, one controller, RF=3 on 3 brokers), clients in" \
    "and out of the cluster lose nothing, a config roll under load loses and duplicates nothing" \
    "($(elapsed) in all)"
