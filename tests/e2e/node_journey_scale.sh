# Sourced by node_kafka_cluster_test.sh (runs in its context: kc, fail, exactly_once, pod_ips,
# $ns, $work): the Cluster grows 3 -> 5 and spreads onto the new brokers when asked, then
# shrinks 5 -> 3 by draining brokers 4 and 3 first; no record is lost or duplicated.
#
#   1. `kubectl scale cluster/demo --replicas=5` (the CRD's scale subresource): 5 pods Ready,
#      Metadata shows brokers 0..4.
#   2. `kubectl annotate cluster demo spool.dev/rebalance=<token>`: status.rebalance reaches Done;
#      brokers 3 and 4 host replicas of orders, each partition on 3 distinct brokers; every
#      record produced so far is read exactly once.
#   3. `kubectl scale --replicas=3`: status.scaleDown shows the drain; the StatefulSet never drops
#      a broker its admin API does not call drained (sampled every 0.5 s: at 4 or fewer broker 4
#      is drained, at 3 broker 3 too) and passes 4 on its way; Metadata shows brokers 0..2 only,
#      every partition of every topic (RF=3) on exactly 0,1,2 with a full ISR; every record is
#      still read exactly once.
# Each wait is bounded (SCALE_WAIT seconds, default 180); the timings are printed.

SCALE_WAIT=${SCALE_WAIT:-180}

scale_ms() { echo "$((($(date +%s%N) - $1) / 1000000))"; }

# scale_wait WHAT COMMAND...: runs COMMAND every second until it succeeds, SCALE_WAIT at most.
scale_wait() {
    local what="$1" deadline=$(($(date +%s) + SCALE_WAIT))
    shift
    until "$@"; do
        (($(date +%s) < deadline)) || fail "$what: not within ${SCALE_WAIT} s"
        sleep 1
    done
}

scale_bootstrap() { pod_ips | sed 's/$/:9093/' | paste -sd, -; }

# scale_metadata FILE [-t TOPIC]: kcat -L through every broker pod: brokers, replicas, ISRs.
scale_metadata() {
    local out="$1"
    shift
    kcat -b "$(scale_bootstrap)" -L "$@" -m 30 >"$out" 2>&1
}

# scale_brokers_are IDS: Metadata lists exactly these broker ids (comma-separated, sorted).
scale_brokers_are() {
    scale_metadata "$work/scale-md" || return 1
    [ "$(grep -oE '^ +broker [0-9]+' "$work/scale-md" | awk '{print $2}' | sort -n | paste -sd, -)" = "$1" ]
}

scale_pods_ready() {
    local want="$1"
    [ "$(kc -n "$ns" get pods -l app.kubernetes.io/instance=demo -o name | wc -l)" = "$want" ] &&
        [ "$(kc -n "$ns" get cluster demo -o jsonpath='{.status.readyReplicas}')" = "$want" ] &&
        [ "$(kc -n "$ns" get cluster demo -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

# scale_read_all WHEN: every record of the earlier steps is in orders exactly once.
scale_read_all() {
    timeout 90 kcat -b "$(scale_bootstrap)" -C -t orders -o beginning -e -q -f '%s\n' -m 30 \
        >"$work/scale-$1.all" 2>"$work/scale-$1.err" ||
        fail "reading orders $1: $(tail -5 "$work/scale-$1.err")"
    local what
    for what in in-cluster host; do
        grep "^$what-" "$work/scale-$1.all" >"$work/scale-$1.$what" || true
        exactly_once "$what records $1" "$work/$what.sent" "$work/scale-$1.$what"
    done
}

scale_rebalance_done() {
    local phase
    phase=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.rebalance.token} {.status.rebalance.phase}')
    [ "$phase" != "$1 Failed" ] ||
        fail "rebalance failed: $(kc -n "$ns" get cluster demo -o jsonpath='{.status.rebalance.message}')"
    [ "$phase" = "$1 Done" ]
}

# The decommission state of broker $1 ("none", "draining", "drained"), asked of broker 0.
scale_drain_state() {
    local ip
    ip=$(kc -n "$ns" get pod demo-0 -o jsonpath='{.status.podIP}')
    curl -sf --max-time 5 "http://$ip:9644/v1/brokers/$1/decommission" | jq -r .state
}

journey_scale() {
    local t0 t_step
    t0=$(date +%s%N)
    # --- 1. three brokers to five ---------------------------------------------------------
    [ "$(kc get crd clusters.spool.dev -o jsonpath='{.spec.versions[0].subresources.scale.specReplicasPath}')" = .spec.replicas ] ||
        fail "the Cluster CRD has no scale subresource"
    t_step=$(date +%s%N)
    kc -n "$ns" scale cluster/demo --replicas=5 >/dev/null
    scale_wait "5 broker pods Ready" scale_pods_ready 5
    scale_wait "Metadata lists brokers 0..4" scale_brokers_are 0,1,2,3,4
    echo "scale 3 -> 5: 5 pods Ready, Metadata lists brokers 0..4 after $(scale_ms "$t_step") ms"

    # --- 2. rebalance onto them -----------------------------------------------------------
    t_step=$(date +%s%N)
    local token="scale-$$"
    kc -n "$ns" annotate cluster demo "spool.dev/rebalance=$token" --overwrite >/dev/null
    scale_wait "rebalance $token Done" scale_rebalance_done "$token"
    scale_metadata "$work/scale-md" -t orders || fail "kcat -L: $(cat "$work/scale-md")"
    grep -E '^ +partition [0-9]+, ' "$work/scale-md" >"$work/scale-orders"
    local line replicas on3=0 on4=0
    while read -r line; do
        replicas=$(sed -E 's/.*replicas: ([0-9]+(,[0-9]+)*).*/\1/' <<<"$line")
        [ "$(tr ',' '\n' <<<"$replicas" | sort -u | wc -l)" = 3 ] || fail "not 3 distinct replicas: $line"
        [[ ",$replicas," == *,3,* ]] && on3=$((on3 + 1))
        [[ ",$replicas," == *,4,* ]] && on4=$((on4 + 1))
    done <"$work/scale-orders"
    ((on3 > 0 && on4 > 0)) || fail "brokers 3 and 4 host no replica of orders: $(cat "$work/scale-orders")"
    echo "rebalance: $(kc -n "$ns" get cluster demo -o jsonpath='{.status.rebalance.message}')" \
        "in $(scale_ms "$t_step") ms; orders: $(sed -E 's/^ +//; s/, isrs: .*//' "$work/scale-orders" | paste -sd';' -)"
    scale_read_all "after the rebalance"

    # --- 3. five brokers to three, draining 4 then 3 --------------------------------------
    t_step=$(date +%s%N)
    # Every change of the StatefulSet's size, from a watch: the polling below (about one sample
    # a second) can miss a size that lasts less than that.
    kc -n "$ns" get statefulset demo --watch -o jsonpath='{.spec.replicas}{"\n"}' \
        >"$work/scale-sizes" 2>/dev/null &
    local size_watch=$!
    kc -n "$ns" scale cluster/demo --replicas=3 >/dev/null
    local deadline=$(($(date +%s) + SCALE_WAIT)) sts seen_sizes="" progress="" message t4="" t3=""
    while :; do
        sts=$(kc -n "$ns" get statefulset demo -o jsonpath='{.spec.replicas}')
        [[ " $seen_sizes " == *" $sts "* ]] || seen_sizes="$seen_sizes $sts"
        if ((sts <= 4)) && [ -z "$t4" ]; then
            [ "$(scale_drain_state 4)" = drained ] || fail "the StatefulSet dropped broker 4 before it was drained"
            t4=$(scale_ms "$t_step")
        fi
        if ((sts <= 3)) && [ -z "$t3" ]; then
            [ "$(scale_drain_state 3)" = drained ] || fail "the StatefulSet dropped broker 3 before it was drained"
            t3=$(scale_ms "$t_step")
        fi
        message=$(kc -n "$ns" get cluster demo -o jsonpath='{.status.conditions[?(@.type=="Progressing")].reason}: {.status.conditions[?(@.type=="Progressing")].message}')
        [[ "$message" == DrainingBrokers:*"partition replicas left"* ]] && [ -z "$progress" ] && progress=$message
        [[ "$message" == ScaleDownBlocked:* ]] && fail "scale-down blocked: $message"
        ((sts == 3)) && scale_pods_ready 3 && break
        (($(date +%s) < deadline)) || fail "scale 5 -> 3: StatefulSet at $sts after ${SCALE_WAIT} s ($message)"
        sleep 0.5
    done
    [ -n "$progress" ] || fail "status never showed the drain's progress"
    kill "$size_watch" 2>/dev/null || true
    wait "$size_watch" 2>/dev/null || true
    seen_sizes=" $(uniq "$work/scale-sizes" | paste -sd' ' -)"
    [[ "$seen_sizes" == *"5 4 3"* ]] ||
        fail "the StatefulSet did not shrink one ordinal at a time (sizes watched:$seen_sizes)"
    [ -z "$(kc -n "$ns" get cluster demo -o jsonpath='{.status.scaleDown}')" ] ||
        fail "status.scaleDown left after the scale-down: $(kc -n "$ns" get cluster demo -o jsonpath='{.status.scaleDown}')"
    scale_wait "Metadata lists brokers 0..2 only" scale_brokers_are 0,1,2
    # Every partition of every topic (__consumer_offsets too) on 0..2 only, ISR full.
    grep -E '^ +partition [0-9]+, ' "$work/scale-md" >"$work/scale-all"
    local isrs
    while read -r line; do
        replicas=$(sed -E 's/.*replicas: ([0-9]+(,[0-9]+)*).*/\1/' <<<"$line")
        isrs=$(sed -E 's/.*isrs: ([0-9]+(,[0-9]+)*).*/\1/' <<<"$line")
        [ "$(tr ',' '\n' <<<"$replicas" | sort -u | paste -sd, -)" = 0,1,2 ] ||
            fail "not on brokers 0,1,2: $line"
        [ "$(tr ',' '\n' <<<"$isrs" | sort -u | paste -sd, -)" = 0,1,2 ] ||
            fail "not fully replicated: $line"
    done <"$work/scale-all"
    echo "scale 5 -> 3: sizes seen:$seen_sizes; broker 4 left at $t4 ms, broker 3 at $t3 ms," \
        "3 pods Ready, Metadata brokers 0..2 after $(scale_ms "$t_step") ms (progress shown: $progress)"
    scale_read_all "after the scale-down"
    echo "scale journey done in $(scale_ms "$t0") ms"
}
