# Sourced by node_kafka_cluster_test.sh (runs in its context: kc, hm, fail, exactly_once, in_pod,
# pod_ips, $ns, $release, $work, $bootstrap). The end of the journey, after the config roll:
#
#   a. a broker pod killed by `kubectl delete pod --force` while a producer writes with acks=all
#      comes back, its broker rejoins every ISR of `orders`, and every acknowledged record is in
#      the topic exactly once;
#   b. Topic deletion: deletionPolicy Delete deletes the Kafka topic, Retain keeps it;
#   c. uninstall as a user would: delete the Topics and the Cluster, then `helm uninstall`;
#      afterwards no object of any namespaced kind that the chart or the operator made is left
#      in the namespace except the PersistentVolumeClaims (the StatefulSets' claims are kept:
#      whenDeleted Retain), and the release's cluster-scoped RBAC is gone. Objects Kubernetes
#      itself puts in every namespace (ServiceAccount default, ConfigMap kube-root-ca.crt) and
#      Events (records that expire by TTL) are not counted.
# Must run last: the release is gone afterwards.

LIFECYCLE_KILL_RATE=${LIFECYCLE_KILL_RATE:-50} # records per second around the pod kill

# isr_sizes BOOTSTRAP: "partition isr-count" lines of orders from kcat -L.
lifecycle_isr_sizes() {
    kcat -b "$1" -L -t orders -m 5 2>/dev/null | grep -E '^ +partition [0-9]+, ' |
        sed -E 's/^ +partition ([0-9]+), .*isrs: ([0-9,]*).*/\1 \2/' |
        awk '{ n = split($2, a, ","); print $1, n }'
}

# The brokers' POD listeners on the pods that have an address (a recreated pod may not yet).
lifecycle_host_bootstrap() {
    pod_ips | grep . | sed 's/$/:9093/' | paste -sd, -
}

lifecycle_pod_kill() {
    local uid_before t0 t_back t_isr deadline
    uid_before=$(kc -n "$ns" get pod demo-1 -o jsonpath='{.metadata.uid}')
    : >"$work/kill.sent"
    (
        i=0
        while [ ! -e "$work/kill-stop" ] && ((i < 100000)); do
            i=$((i + 1))
            echo "kill-$i" >>"$work/kill.sent"
            echo "kill-$i"
            sleep "$(awk "BEGIN {print 1 / $LIFECYCLE_KILL_RATE}")"
        done
    ) | in_pod kcat -b "$bootstrap" -P -t orders -X acks=all -X enable.idempotence=true \
        -X enable.sparse.connections=false -X message.timeout.ms=300000 -X linger.ms=5 -m 30 \
        2>"$work/kill.perr" &
    producer_pid=$!
    sleep 3
    t0=$(date +%s%N)
    kc -n "$ns" delete pod demo-1 --force --grace-period=0 >/dev/null 2>&1 ||
        fail "kubectl delete pod demo-1 --force"
    deadline=$(($(date +%s) + 120))
    t_back=
    t_isr=
    while (($(date +%s) < deadline)); do
        if [ -z "$t_back" ]; then
            local uid ready
            uid=$(kc -n "$ns" get pod demo-1 -o jsonpath='{.metadata.uid}' 2>/dev/null || true)
            ready=$(kc -n "$ns" get pod demo-1 \
                -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null || true)
            [ -n "$uid" ] && [ "$uid" != "$uid_before" ] && [ "$ready" = True ] &&
                t_back=$(date +%s%N)
        fi
        if [ -n "$t_back" ]; then
            # Every partition's ISR holds all 3 brokers again: broker 1 caught up.
            if lifecycle_isr_sizes "$(lifecycle_host_bootstrap)" >"$work/kill.isrs" &&
                [ "$(wc -l <"$work/kill.isrs")" = 3 ] &&
                [ "$(awk '$2 != 3' "$work/kill.isrs" | wc -l)" = 0 ]; then
                t_isr=$(date +%s%N)
                break
            fi
        fi
        sleep 0.5
    done
    [ -n "$t_back" ] || fail "demo-1 did not come back Ready within 120 s of its forced deletion"
    [ -n "$t_isr" ] || fail "broker 1 did not rejoin every ISR of orders within 120 s: $(
        kcat -b "$(lifecycle_host_bootstrap)" -L -t orders -m 5 2>&1 | grep partition)"
    sleep 2
    touch "$work/kill-stop"
    wait "$producer_pid" || fail "the producer failed around the pod kill: $(tail -5 "$work/kill.perr")"
    producer_pid=
    if grep -q 'Delivery failed' "$work/kill.perr"; then
        fail "the producer reports failed deliveries: $(grep 'Delivery failed' "$work/kill.perr" | head -3)"
    fi
    timeout 90 kcat -b "$(lifecycle_host_bootstrap)" -C -t orders -o beginning -e -q -f '%s\n' \
        -m 30 >"$work/kill.all" 2>"$work/kill.err" || fail "reading orders back: $(tail -5 "$work/kill.err")"
    grep '^kill-' "$work/kill.all" >"$work/kill.read" || true
    echo "pod kill: demo-1 back Ready $(((t_back - t0) / 1000000)) ms after kubectl delete --force," \
        "in every ISR of orders after $(((t_isr - t0) / 1000000)) ms"
    exactly_once "pod kill (acks=all while demo-1 was killed)" "$work/kill.sent" "$work/kill.read"
}

# lifecycle_topic_listed NAME: Metadata (all topics) from the brokers lists topic NAME.
lifecycle_topic_listed() {
    kcat -b "$(lifecycle_host_bootstrap)" -L -m 5 2>/dev/null | grep -q "^ *topic \"$1\" with"
}

lifecycle_topic_deletion() {
    local policy
    for policy in Delete Retain; do
        kc apply -f - >/dev/null <<YAML
apiVersion: spool.dev/v1alpha1
kind: Topic
metadata: {name: lifecycle-${policy,,}, namespace: $ns}
spec:
  clusterRef: {name: demo}
  partitions: 1
  replicationFactor: 3
  deletionPolicy: $policy
YAML
    done
    for policy in delete retain; do
        kc -n "$ns" wait --for=condition=Ready "topic/lifecycle-$policy" --timeout 60s >/dev/null ||
            fail "Topic lifecycle-$policy not Ready"
        local i
        for i in $(seq 1 20); do lifecycle_topic_listed "lifecycle-$policy" && break; sleep 0.5; done
        lifecycle_topic_listed "lifecycle-$policy" || fail "Metadata does not list lifecycle-$policy"
    done
    local t0; t0=$(date +%s%N)
    kc -n "$ns" delete topic lifecycle-delete --timeout 60s >/dev/null ||
        fail "Topic lifecycle-delete (policy Delete) was not deleted"
    local gone=
    for i in $(seq 1 60); do
        lifecycle_topic_listed lifecycle-delete || { gone=1; break; }
        sleep 0.5
    done
    [ -n "$gone" ] || fail "Kafka topic lifecycle-delete still listed after its Topic was deleted"
    echo "topic deletion: policy Delete removed Kafka topic lifecycle-delete in $((($(date +%s%N) - t0) / 1000000)) ms"
    kc -n "$ns" delete topic lifecycle-retain --timeout 60s >/dev/null ||
        fail "Topic lifecycle-retain (policy Retain) was not deleted"
    sleep 2
    lifecycle_topic_listed lifecycle-retain ||
        fail "Kafka topic lifecycle-retain is gone although its policy was Retain"
    echo "topic deletion: policy Retain removed the resource and kept Kafka topic lifecycle-retain"
}

lifecycle_uninstall() {
    local t0; t0=$(date +%s%N)
    # The listing below must see what there is: before, it shows the StatefulSet and the Lease.
    local before; before=$(lifecycle_leftovers)
    [[ "$before" == *statefulset.apps/demo* && "$before" == *lease.coordination.k8s.io/* ]] ||
        fail "the namespace listing does not show the StatefulSet and the Lease: $before"
    kc -n "$ns" delete pod client --wait=false >/dev/null 2>&1 || true
    # As a user would: the Topics first (the operator runs their finalizers), then the Cluster
    # (its StatefulSet, Services, ConfigMap and PDB go with it: owner references), then the chart.
    kc -n "$ns" delete topic --all --timeout 60s >/dev/null || fail "deleting the Topics"
    kc -n "$ns" delete cluster demo --timeout 60s >/dev/null || fail "deleting the Cluster"
    hm uninstall "$release" -n "$ns" --wait --timeout 120s >/dev/null || fail "helm uninstall"
    # Garbage collection and pod termination finish in the background: wait, bounded.
    local leftovers deadline=$(($(date +%s) + 90))
    while :; do
        leftovers=$(lifecycle_leftovers)
        [ -z "$leftovers" ] && break
        (($(date +%s) < deadline)) || break
        sleep 1
    done
    [ -z "$leftovers" ] || fail "left behind in $ns after helm uninstall: $leftovers"
    local pvcs; pvcs=$(kc -n "$ns" get pvc -o name | sort | paste -sd' ' -)
    [[ "$pvcs" == *persistentvolumeclaim/data-demo-0* && "$pvcs" == *data-demo-2* ]] ||
        fail "the brokers' claims should be kept (whenDeleted: Retain): $pvcs"
    local cluster_scoped
    cluster_scoped=$(kc get clusterrole,clusterrolebinding -o name | grep -F "$release" || true)
    [ -z "$cluster_scoped" ] || fail "cluster-scoped leftovers of the release: $cluster_scoped"
    echo "uninstall: Topics, Cluster and release gone in $((($(date +%s%N) - t0) / 1000000)) ms;" \
        "left in $ns: $pvcs (the claims' Retain policy); no ClusterRole/Binding of $release"
}

# Every object of every namespaced kind still in $ns, except claims, Events and what Kubernetes
# puts in every namespace.
lifecycle_leftovers() {
    local kinds kind
    kinds=$(kc api-resources --verbs=list --namespaced -o name |
        grep -vE '^(events|events\.events\.k8s\.io|persistentvolumeclaims)$' | paste -sd, -)
    # Nothing left is the expected answer: grep finding no line is no error here (pipefail).
    { kc -n "$ns" get "$kinds" -o name 2>/dev/null || true; } |
        { grep -vE '^(serviceaccount/default|configmap/kube-root-ca\.crt)$' || true; } |
        paste -sd' ' -
}

lifecycle_journey() {
    lifecycle_pod_kill
    lifecycle_topic_deletion
    lifecycle_uninstall
}
