# Sourced by node_kafka_cluster_test.sh (runs in its context: kc, fail, exactly_once, pod_ips,
# $ns, $work), on the 3-broker Cluster demo before the scale journey:
#
#   0. zones: the node is labelled zone-a (node_kafka_cluster_test.sh); every broker pod carries
#      the label (Kubernetes' pod topology labels) and every broker registered rack zone-a;
#   a. a Topic without spec.replicationFactor gets the Cluster's default: 3 replicas of each
#      partition on 3 distinct brokers;
#   b. a Topic created with replicationFactor 1 and holding records is changed to 3: the
#      operator reassigns its partitions, status.replicasChange shows the move and goes away,
#      status.replicationFactor says 3, Metadata shows every partition on 3 distinct brokers with
#      3 in sync, and every record produced before the change is read back exactly once;
#   c. a spec.config value the broker would refuse ("a week" for log.retention.ms) is refused
#      by the operator (Degraded, InvalidSpec, the broker parser's message) and rolls nothing;
#      putting it back makes the Cluster Ready again.

TOPICS_RECORDS=${TOPICS_RECORDS:-500}

# topics_partitions TOPIC: "partition N replicas: a,b,c isrs: a,b,c" lines from one broker.
topics_partitions() {
    local ip
    ip=$(pod_ips | grep . | head -1)
    kcat -b "$ip:9093" -L -t "$1" -m 10 2>/dev/null | grep -E '^ +partition [0-9]+, ' |
        sed -E 's/leader [0-9]+, //'
}

# topics_on_distinct TOPIC RF: every partition has RF distinct replicas and RF in sync.
topics_on_distinct() {
    local line replicas isrs n=0
    while read -r line; do
        replicas=$(sed -E 's/.*replicas: ([0-9]+(,[0-9]+)*).*/\1/' <<<"$line")
        isrs=$(sed -E 's/.*isrs: ([0-9]+(,[0-9]+)*).*/\1/' <<<"$line")
        [ "$(tr ',' '\n' <<<"$replicas" | sort -u | wc -l)" = "$2" ] || return 1
        [ "$(tr ',' '\n' <<<"$isrs" | sort -u | wc -l)" = "$2" ] || return 1
        n=$((n + 1))
    done < <(topics_partitions "$1")
    ((n > 0))
}

topics_wait() { # WHAT SECONDS CMD...
    local what="$1" deadline=$(($(date +%s) + $2))
    shift 2
    until "$@"; do
        (($(date +%s) < deadline)) || fail "$what: not within the deadline"
        sleep 1
    done
}

# resized has replication factor 3 and no change under way; notes having seen one.
topics_resized() {
    local status
    status=$(kc -n "$ns" get topic resized \
        -o jsonpath='{.status.replicationFactor} {.status.replicasChange.targetReplicas}')
    [ -z "${status#* }" ] || touch "$work/resized.change-seen"
    [ "$status" = "3 " ]
}

# The Cluster's Degraded condition refuses the bad value with the broker parser's message.
topics_refused() {
    kc -n "$ns" get cluster demo -o jsonpath='{.status.conditions[?(@.type=="Degraded")].reason} {.status.conditions[?(@.type=="Degraded")].message}' |
        grep -q "^InvalidSpec .*invalid value 'a week' for 'log.retention.ms'"
}

journey_topics() {
    local t0 bootstrap_host ip racks
    t0=$(date +%s%N)
    for i in 0 1 2; do
        [ "$(kc -n "$ns" get pod "demo-$i" -o jsonpath='{.metadata.labels.topology\.kubernetes\.io/zone}')" = zone-a ] ||
            fail "pod demo-$i does not carry its node's zone label"
    done
    ip=$(pod_ips | grep . | head -1)
    racks=$(curl -sf --max-time 5 "http://$ip:9644/v1/cluster" | jq -r '[.brokers[].rack] | join(",")')
    [ "$racks" = zone-a,zone-a,zone-a ] || fail "brokers' racks are '$racks', not zone-a for each"
    echo "topics: every broker registered rack zone-a, its node's zone"
    kc apply -f - >/dev/null <<YAML
apiVersion: spool.dev/v1alpha1
kind: Topic
metadata: {name: defaulted, namespace: $ns}
spec:
  clusterRef: {name: demo}
  partitions: 2
---
apiVersion: spool.dev/v1alpha1
kind: Topic
metadata: {name: resized, namespace: $ns}
spec:
  clusterRef: {name: demo}
  partitions: 3
  replicationFactor: 1
YAML
    kc -n "$ns" wait --for=condition=Ready topic/defaulted topic/resized --timeout 120s >/dev/null ||
        fail "Topics defaulted/resized not Ready: $(kc -n "$ns" get topic -o wide)"
    [ "$(kc -n "$ns" get topic defaulted -o jsonpath='{.status.replicationFactor}')" = 3 ] ||
        fail "a Topic without replicationFactor did not get the Cluster's 3: $(kc -n "$ns" get topic defaulted -o jsonpath='{.status}')"
    topics_wait "defaulted on 3 distinct brokers" 30 topics_on_distinct defaulted 3
    echo "topics: a Topic without replicationFactor has 3 replicas per partition"

    bootstrap_host=$(pod_ips | grep . | sed 's/$/:9093/' | paste -sd, -)
    seq 1 "$TOPICS_RECORDS" | sed 's/^/resized-/' >"$work/resized.sent"
    kcat -b "$bootstrap_host" -P -t resized -X acks=all -m 30 <"$work/resized.sent" \
        2>"$work/resized.perr" || fail "produce to resized: $(tail -3 "$work/resized.perr")"
    kc -n "$ns" patch topic resized --type merge -p '{"spec":{"replicationFactor":3}}' >/dev/null
    topics_wait "resized reports replication factor 3 with no change under way" 180 topics_resized
    local seen_change=""
    [ -e "$work/resized.change-seen" ] && seen_change=" (status.replicasChange seen)"
    topics_wait "resized on 3 distinct brokers, 3 in sync" 60 topics_on_distinct resized 3
    timeout 60 kcat -b "$bootstrap_host" -C -t resized -o beginning -e -q -f '%s\n' \
        >"$work/resized.read" 2>"$work/resized.cerr" || fail "consume resized: $(tail -3 "$work/resized.cerr")"
    exactly_once "resized (RF 1 -> 3)" "$work/resized.sent" "$work/resized.read"
    echo "topics: replicationFactor 1 -> 3 reassigned$seen_change in $((($(date +%s%N) - t0) / 1000000)) ms"

    local generation hash
    generation=$(kc -n "$ns" get statefulset demo -o jsonpath='{.metadata.generation}')
    hash=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.configHash}')
    kc -n "$ns" patch cluster demo --type merge \
        -p '{"spec":{"config":{"log.retention.ms":"a week"}}}' >/dev/null
    topics_wait "the Cluster refuses log.retention.ms=a week" 60 topics_refused
    [ "$(kc -n "$ns" get statefulset demo -o jsonpath='{.metadata.generation}')" = "$generation" ] ||
        fail "the refused config changed the StatefulSet"
    kc -n "$ns" patch cluster demo --type json \
        -p '[{"op":"remove","path":"/spec/config/log.retention.ms"}]' >/dev/null
    kc -n "$ns" wait --for=condition=Ready cluster/demo --timeout 120s >/dev/null ||
        fail "Cluster demo not Ready after the bad value was removed"
    [ "$(kc -n "$ns" get cluster demo -o jsonpath='{.status.configHash}')" = "$hash" ] ||
        fail "the config hash moved"
    echo "topics: a config value the broker would refuse is refused before anything rolls"
    kc -n "$ns" delete topic defaulted resized --timeout 60s >/dev/null || fail "delete Topics"
}
