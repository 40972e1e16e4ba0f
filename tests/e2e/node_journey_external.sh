# Sourced by node_kafka_cluster_test.sh (runs in its context: kc, fail, exactly_once,
# produce_and_consume, $ns, $work, $DIR, RECORDS): the external listener through NodePorts, the
# brokers' NetworkPolicy, and growing the brokers' volumes.

# The node's IP, the only address kube-proxy serves NodePorts on (--nodeport-addresses).
external_node_ip() { grep -o 'node_ip=[^ ]*' "$DIR/ports" | cut -d= -f2; }

# Before the brokers' PVs are made: a StorageClass that allows volume expansion, for the PVs and
# the Cluster's claims (the API server refuses a claim's new size unless its class allows it).
# Sets CLUSTER_STORAGE_CLASS, which node_lib.sh's apply_cluster puts into spec.storage.
external_storage_setup() {
    CLUSTER_STORAGE_CLASS="$ns-expandable"
    kc apply -f - >/dev/null <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: $CLUSTER_STORAGE_CLASS}
provisioner: kubernetes.io/no-provisioner
allowVolumeExpansion: true
volumeBindingMode: Immediate
YAML
}
external_cleanup() {
    [ -z "${CLUSTER_STORAGE_CLASS:-}" ] || kc delete storageclass "$CLUSTER_STORAGE_CLASS" --wait=false >/dev/null 2>&1
}

# After step 3: the Cluster was applied with externalListener {type: NodePort} (set from the
# start: enabling it later would roll the three brokers once more, ~the cost of step 4, for what
# step 4's roll already shows). From the host, through <node IP>:<nodePort> of each broker only,
# kcat produces RECORDS records with acks=all and a new consumer group reads them back exactly
# once; each broker advertises its node IP and its own nodePort. Then spec.networkPolicy turns
# on: the operator's NetworkPolicy is accepted by the API server (nothing enforces it here: the
# bridge CNI does not implement NetworkPolicy, so enforcement is not tested).
external_journey() {
    local node_ip port i b=""
    node_ip=$(external_node_ip)
    [ -n "$node_ip" ] || fail "external: no node_ip in $DIR/ports"
    for i in 0 1 2; do
        port=$(kc -n "$ns" get service "demo-external-$i" -o jsonpath='{.spec.type} {.spec.ports[0].nodePort} {.spec.selector.statefulset\.kubernetes\.io/pod-name}')
        [ "$port" = "NodePort $((31090 + i)) demo-$i" ] || fail "external: Service demo-external-$i is '$port'"
        b+="$node_ip:$((31090 + i)),"
    done
    b=${b%,}
    kcat -b "$node_ip:31090" -L -t orders -m 30 >"$work/external-md" 2>&1 ||
        fail "external: kcat -L through $node_ip:31090: $(tail -5 "$work/external-md")"
    for i in 0 1 2; do
        grep -q "broker $i at $node_ip:$((31090 + i))" "$work/external-md" ||
            fail "external: broker $i not advertised on $node_ip:$((31090 + i)): $(grep broker "$work/external-md")"
    done
    echo "external: 3 NodePort Services; brokers advertise $node_ip:31090-31092"
    # The topic's records so far (other steps may have added some): the consumer group reads
    # them all, then this phase's.
    local before
    before=$(timeout 60 kcat -b "$b" -C -t orders -o beginning -e -q -f '%s\n' -m 30 2>/dev/null | wc -l)
    produce_and_consume external "$b" "$((before + RECORDS))" env

    kc -n "$ns" patch cluster demo --type merge \
        -p '{"spec":{"networkPolicy":{"enabled":true}}}' >/dev/null
    local deadline=$(($(date +%s) + 30)) np=""
    while (($(date +%s) < deadline)); do
        np=$(kc -n "$ns" get networkpolicy demo-brokers -o jsonpath='{.spec.ingress[1].ports[*].port} {.spec.ingress[2].ports[0].port} {.spec.ingress[2].from[0].namespaceSelector.matchLabels}' 2>/dev/null || true)
        [ -n "$np" ] && break
        sleep 0.5
    done
    [[ "$np" == "9092 9093 9094 9644 "*"kubernetes.io/metadata.name"*"$ns"* ]] ||
        fail "external: NetworkPolicy demo-brokers not as expected: '$np'"
    echo "external: NetworkPolicy demo-brokers accepted (Kafka 9092,9093,9094 from anywhere; HTTP from $ns) - not enforced by this CNI"
}

# After step 4 (the roll): spec.storage.size 1Gi -> 2Gi. Every claim asks 2Gi, the recreated
# StatefulSet's template says 2Gi, no pod restarted (same uids), the Cluster stays Ready. A
# smaller size is refused by the API server (the CRD's rule). hostPath volumes cannot grow and
# no CSI external-resizer runs here: this test stands in for one, setting each PV's capacity and
# claim's status.capacity, to see the operator's ResizingStorage finish.
storage_journey() {
    local i uids_before uids_after sts_uid_before
    uids_before=$(kc -n "$ns" get pods -l app.kubernetes.io/instance=demo -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid}{"\n"}{end}' | sort)
    sts_uid_before=$(kc -n "$ns" get statefulset demo -o jsonpath='{.metadata.uid}')
    local t0
    t0=$(date +%s%N)
    kc -n "$ns" patch cluster demo --type merge -p '{"spec":{"storage":{"size":"2Gi"}}}' >/dev/null
    local deadline=$(($(date +%s) + 90)) claims="" tmpl="" sts_uid="" reasons="" not_ready=0 r
    while (($(date +%s) < deadline)); do
        claims=$(kc -n "$ns" get pvc -l app.kubernetes.io/instance=demo -o jsonpath='{range .items[*]}{.spec.resources.requests.storage}{"\n"}{end}' | sort -u | paste -sd, -)
        sts_uid=$(kc -n "$ns" get statefulset demo -o jsonpath='{.metadata.uid}' 2>/dev/null || true)
        tmpl=$(kc -n "$ns" get statefulset demo -o jsonpath='{.spec.volumeClaimTemplates[0].spec.resources.requests.storage}' 2>/dev/null || true)
        r=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.conditions[?(@.type=="Progressing")].reason}')
        [[ " $reasons " == *" $r "* ]] || reasons+=" $r"
        [ "$(kc -n "$ns" get cluster demo -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ] ||
            not_ready=$((not_ready + 1))
        [ "$claims" = 2Gi ] && [ "$tmpl" = 2Gi ] && [ -n "$sts_uid" ] && [ "$sts_uid" != "$sts_uid_before" ] && break
        sleep 0.5
    done
    [ "$claims" = 2Gi ] || fail "storage: the claims ask '$claims', not 2Gi"
    [ "$tmpl" = 2Gi ] || fail "storage: the StatefulSet's claim template says '$tmpl', not 2Gi"
    [ "$sts_uid" != "$sts_uid_before" ] || fail "storage: the StatefulSet was not recreated"
    echo "storage: $(kc -n "$ns" get pvc -l app.kubernetes.io/instance=demo -o name | wc -l) claims (those of brokers scaled away too) ask 2Gi, StatefulSet recreated with a 2Gi template in $((($(date +%s%N) - t0) / 1000000)) ms (Progressing reasons seen:$reasons)"
    [[ "$reasons" == *ResizingStorage* ]] || fail "storage: no ResizingStorage in status (saw:$reasons)"
    # Standing in for a CSI external-resizer (none runs here; hostPath cannot grow): the PVs
    # and the claims' status report the new capacity, as a resizer would once done. Every claim
    # of the Cluster grows, also those the scale-down left behind (a later scale-up reuses them).
    local claim
    for claim in $(kc -n "$ns" get pvc -l app.kubernetes.io/instance=demo -o jsonpath='{range .items[*]}{.metadata.name}={.spec.volumeName}{"\n"}{end}'); do
        kc patch pv "${claim#*=}" --type merge -p '{"spec":{"capacity":{"storage":"2Gi"}}}' >/dev/null
        kc -n "$ns" patch pvc "${claim%%=*}" --subresource status --type merge \
            -p '{"status":{"capacity":{"storage":"2Gi"}}}' >/dev/null
    done
    deadline=$(($(date +%s) + 60))
    while (($(date +%s) < deadline)); do
        r=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.conditions[?(@.type=="Progressing")].reason}')
        [ "$r" != ResizingStorage ] && break
        sleep 1
    done
    [ "$r" != ResizingStorage ] || fail "storage: still ResizingStorage after every claim reports 2Gi"
    kc -n "$ns" wait --for=condition=Ready cluster/demo --timeout 60s >/dev/null ||
        fail "storage: Cluster not Ready after the resize"
    uids_after=$(kc -n "$ns" get pods -l app.kubernetes.io/instance=demo -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid}{"\n"}{end}' | sort)
    [ "$uids_after" = "$uids_before" ] ||
        fail "storage: pods restarted by the resize: before $uids_before, after $uids_after"
    ((not_ready == 0)) || fail "storage: the Cluster was not Ready in $not_ready samples during the resize"
    # The orphaned pods are the new StatefulSet's: it owns them again.
    for i in 0 1 2; do
        [ "$(kc -n "$ns" get pod "demo-$i" -o jsonpath='{.metadata.ownerReferences[0].uid}')" = "$sts_uid" ] ||
            fail "storage: demo-$i is not owned by the recreated StatefulSet"
    done
    local refused
    if refused=$(kc -n "$ns" patch cluster demo --type merge -p '{"spec":{"storage":{"size":"1Gi"}}}' 2>&1); then
        fail "storage: a smaller size was accepted"
    fi
    [[ "$refused" == *"storage.size cannot shrink"* ]] || fail "storage: shrinking refused with '$refused'"
    echo "storage: resize done (Progressing $r), same 3 pods (uids unchanged), adopted by the new StatefulSet, Cluster Ready throughout; 2Gi -> 1Gi refused"
}
