#!/usr/bin/env bash
# A single-node Kubernetes on this machine for the e2e tests: the control plane of start.sh plus
# kube-scheduler, containerd + runc (Debian), a bridge CNI, kubelet, kube-proxy and CoreDNS (built
# by build.sh into ~/.cache/spool/k8s-<version>/bin), with the network kept inside the machine.
#
#   scripts/k8s/node.sh start DIR          # returns when the node is Ready; KUBECONFIG=DIR/kubeconfig
#   scripts/k8s/node.sh import DIR TAR...  # loads docker-archive images into the node's containerd
#   scripts/k8s/node.sh stop DIR           # tears everything down (KEEP=1 keeps DIR's logs)
#
# Network: pods sit on the bridge spool-br0 with addresses from 10.244.7.0/24 (host-local IPAM);
# the host holds 10.244.7.1 on the bridge, which is the node IP, the DNS server (CoreDNS, bound to
# it, answering cluster names only) and the gateway to the Service range 10.96.0.0/16 - the only
# route pods get: no default route, no masquerade, and FORWARD rules drop anything from or to the
# pod range that does not stay on the bridge (forwarding is on while the node runs, for pod ->
# ClusterIP -> pod). One such node per machine: a fixed bridge and range, and containerd's root
# (images and their layers) cached in ~/.cache/spool/node-containerd-<version>. The kubelet
# changes a few kernel settings; stop puts them back, with forwarding.
set -euo pipefail

CMD="${1:?usage: node.sh start|import|stop DIR}"
DIR="${2:?usage: node.sh start|import|stop DIR}"
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
K8S_VERSION="${SPOOL_K8S_VERSION:-v1.37.2}"
BIN="${SPOOL_CACHE:-$HOME/.cache/spool}/k8s-${K8S_VERSION}/bin"
NODE_NAME=spool-node
BRIDGE=spool-br0
POD_CIDR=10.244.7.0/24
NODE_IP=10.244.7.1
SERVICE_CIDR=10.96.0.0/16
CHAIN=SPOOL-NODE-FORWARD
PAUSE_IMAGE=registry.k8s.io/pause:3.10
# Changed during the run (the kubelet's three; forwarding, for start_network) and put back by stop.
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.ip_forward)
# containerd first: stop() ends the others, then clears what they left in it, then ends it.
DAEMONS=(containerd kube-scheduler kubelet kube-proxy coredns apiserver-forwarder)

log() { echo "node: $*" >&2; }
die() { log "$*"; exit 1; }
ctr_() { ctr --address "$DIR/containerd/containerd.sock" -n k8s.io "$@"; }
kc() { "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" "$@"; }

# Every part must be there: a missing one fails the start (and so the tests) loudly.
check_parts() {
    local missing=()
    for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns; do
        [ -x "$BIN/$b" ] || missing+=("$BIN/$b (scripts/k8s/build.sh)")
    done
    for t in containerd containerd-shim-runc-v2 runc ctr iptables conntrack socat ip; do
        command -v "$t" >/dev/null || missing+=("$t (scripts/setup.sh --with-tests)")
    done
    for p in bridge host-local loopback; do
        [ -x "/usr/lib/cni/$p" ] || missing+=("/usr/lib/cni/$p (containernetworking-plugins)")
    done
    ((${#missing[@]} == 0)) || die "missing: ${missing[*]}"
}

daemon() {  # daemon NAME COMMAND...: runs in the background, pid in DIR/NAME.pid
    local name="$1"; shift
    "$@" >"$DIR/$name.log" 2>&1 &
    echo $! >"$DIR/$name.pid"
}

wait_for() {  # wait_for SECONDS WHAT COMMAND...
    local seconds="$1" what="$2"; shift 2
    for _ in $(seq 1 $((seconds * 4))); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.25
    done
    die "$what not there after ${seconds}s (logs in $DIR)"
}

write_containerd_config() {
    mkdir -p "$DIR/containerd" "$DIR/cni"
    # Its own root, state and socket so it never touches a system containerd. The root (images,
    # their unpacked layers) outlives the run: re-importing an unchanged image is then a no-op, and
    # deleting a few hundred MB of layers at every stop took half a minute on this disk. OOM score:
    # root here lacks CAP_SYS_RESOURCE, so lowering a sandbox's oom_score_adj would fail every pod.
    cat >"$DIR/containerd/config.toml" <<TOML
version = 2
root = "$CONTAINERD_ROOT"
state = "$DIR/containerd/state"
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs",
                    "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
                    "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$DIR/containerd/containerd.sock"
[ttrpc]
  address = "$DIR/containerd/containerd-ttrpc.sock"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$DIR/cni"
TOML
    # No default route and no masquerade: the only way out of a pod is to the Service range.
    cat >"$DIR/cni/10-spool.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "spool",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": false,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$DIR/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "rangeStart": "${POD_CIDR%.0/24}.10",
                     "rangeEnd": "${POD_CIDR%.0/24}.250"}]],
        "routes": [{"dst": "$SERVICE_CIDR", "gw": "$NODE_IP"}]
      }
    },
    {"type": "loopback"}
  ]
}
JSON
}

write_kubelet_config() {
    mkdir -p "$DIR/kubelet"
    echo "nameserver $NODE_IP" >"$DIR/resolv.conf"
    echo "search default.svc.cluster.local svc.cluster.local cluster.local" >>"$DIR/resolv.conf"
    if [ ! -f "$DIR/kubelet/serving.crt" ]; then
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=$NODE_NAME" \
            -addext "subjectAltName=IP:$NODE_IP,DNS:$NODE_NAME" \
            -keyout "$DIR/kubelet/serving.key" -out "$DIR/kubelet/serving.crt" 2>/dev/null
    fi
    # cgroup v1 (all this machine has) is refused by default since 1.35; no swap check; never
    # collect images (there is no registry to pull a deleted one back from); eviction only when
    # truly out of room, so a full-ish build disk does not evict the test's pods.
    cat >"$DIR/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $DIR/kubelet/serving.crt
tlsPrivateKeyFile: $DIR/kubelet/serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $DIR/client-ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$DIR/containerd/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
resolvConf: $DIR/resolv.conf
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
registerNode: true
serializeImagePulls: false
nodeStatusReportFrequency: 10s
YAML
}

start_network() {
    ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
    ip addr replace "$NODE_IP/${POD_CIDR#*/}" dev "$BRIDGE"
    ip link set "$BRIDGE" up
    iptables -N "$CHAIN" 2>/dev/null || iptables -F "$CHAIN"
    iptables -A "$CHAIN" -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
    iptables -A "$CHAIN" -s "$POD_CIDR" -j DROP
    iptables -A "$CHAIN" -d "$POD_CIDR" -j DROP
    iptables -C FORWARD -j "$CHAIN" 2>/dev/null || iptables -I FORWARD 1 -j "$CHAIN"
    # A pod reaching another through a ClusterIP is routed back out of the bridge after kube-proxy's
    # DNAT: that needs forwarding, which the chain above confines to the bridge.
    sysctl -q -w net.ipv4.ip_forward=1
}

stop_network() {
    while iptables -D FORWARD -j "$CHAIN" 2>/dev/null; do :; done
    iptables -F "$CHAIN" 2>/dev/null; iptables -X "$CHAIN" 2>/dev/null
    ip link del "$BRIDGE" 2>/dev/null || true
}

# The kubelet's own chains (KUBE-FIREWALL, KUBE-KUBELET-CANARY, KUBE-IPTABLES-HINT), which
# kube-proxy --cleanup leaves: the jumps to them, then the chains. Nothing else on the machine
# makes KUBE-* chains (one node per machine).
remove_kube_chains() {
    local cmd table chain
    for cmd in iptables ip6tables; do
        for table in filter nat mangle; do
            "$cmd" -t "$table" -S 2>/dev/null | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*-j KUBE-' |
                sed 's/^-A/-D/' | while read -r rule; do eval "$cmd -t $table $rule" 2>/dev/null; done
            for chain in $("$cmd" -t "$table" -S 2>/dev/null | sed -n 's/^-N \(KUBE-[A-Z0-9-]*\)$/\1/p'); do
                "$cmd" -t "$table" -F "$chain" 2>/dev/null
            done
            for chain in $("$cmd" -t "$table" -S 2>/dev/null | sed -n 's/^-N \(KUBE-[A-Z0-9-]*\)$/\1/p'); do
                "$cmd" -t "$table" -X "$chain" 2>/dev/null
            done
        done
    done
}

# The `kubernetes` Service's endpoint for pods: the node IP, where a forwarder hands connections
# to the loopback apiserver (start.sh runs the apiserver's endpoint reconciler off).
publish_apiserver() {
    local api_port="$1"
    daemon apiserver-forwarder socat "TCP-LISTEN:6443,bind=$NODE_IP,reuseaddr,fork" \
        "TCP:127.0.0.1:$api_port"
    kc apply -f - >/dev/null <<YAML
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kubernetes
  namespace: default
  labels: {kubernetes.io/service-name: kubernetes, endpointslice.kubernetes.io/managed-by: spool-node}
addressType: IPv4
endpoints: [{addresses: ["$NODE_IP"], conditions: {ready: true}}]
ports: [{name: https, port: 6443, protocol: TCP}]
YAML
}

write_corefile() {
    cat >"$DIR/Corefile" <<COREFILE
.:53 {
    bind $NODE_IP
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $DIR/kubeconfig spool-test
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
COREFILE
}

# Every container (and its writable layer) in the persistent root, through containerd: tasks
# first (a pod the kubelet did not get to). Only the images stay.
remove_containers() {
    local id
    for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$id" 2>/dev/null; done
    for id in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$id" >/dev/null 2>&1; done
    for id in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers delete "$id" >/dev/null 2>&1; done
}

# An archive's name carries the hash of its inputs (images.sh), so one imported into the
# persistent root before - and still listed there under the same digest - is not read again.
# The digest matters: the root is shared by every build tree on the machine, and another tree's
# import retags localhost/spool-operator:e2e to its own binary while this tree's stamp stays.
import_images() {
    local tar stamp stamps="$CONTAINERD_ROOT.imported"
    [ -d "$CONTAINERD_ROOT" ] || rm -rf "$stamps"
    mkdir -p "$stamps"
    for tar in "$@"; do
        stamp="$stamps/$(basename "$tar")"
        if [ -f "$stamp" ] && ctr_ images ls | awk -v ref="$(cut -d' ' -f1 "$stamp")" \
            -v digest="$(cut -s -d' ' -f2 "$stamp")" \
            'digest != "" && $1 == ref && $3 == digest { found = 1 } END { exit !found }'; then
            continue
        fi
        ctr_ images import "$tar" >"$DIR/import.out" 2>&1 || die "ctr images import $tar failed: $(cat "$DIR/import.out")"
        # ctr prints "unpacking NAME (sha256:...)...done" per image in the archive.
        sed -n 's/^unpacking \([^ ]*\) (\(sha256:[0-9a-f]*\)).*/\1 \2/p' "$DIR/import.out" |
            head -1 >"$stamp"
    done
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

start() {
    check_parts
    stop >/dev/null 2>&1 || true
    mkdir -p "$DIR"
    DIR="$(cd "$DIR" && pwd)"
    local t0; t0=$(date +%s)
    for s in "${SYSCTLS[@]}"; do echo "$s=$(sysctl -n "$s")"; done >"$DIR/sysctls.saved"
    ip netns list 2>/dev/null | awk '{print $1}' | sort >"$DIR/netns.before"
    start_network

    SPOOL_K8S_NODE_IP="$NODE_IP" SPOOL_K8S_KCM_CONTROLLERS="$KCM_CONTROLLERS" \
        "$SRC/scripts/k8s/start.sh" "$DIR" >/dev/null
    local api_port; api_port=$(sed -n 's/.*api=\([0-9]*\).*/\1/p' "$DIR/ports")
    daemon kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$DIR/kubeconfig" \
        --authentication-kubeconfig "$DIR/kubeconfig" --authorization-kubeconfig "$DIR/kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$(free_port)" --leader-elect=false

    write_containerd_config
    daemon containerd containerd --config "$DIR/containerd/config.toml"
    wait_for 30 containerd ctr_ version
    remove_containers  # a run that was killed before its stop left them
    import_images "$PAUSE_TAR"

    KUBELET_PORT=$(free_port); KUBELET_HEALTHZ_PORT=$(free_port)
    write_kubelet_config
    daemon kubelet "$BIN/kubelet" --config "$DIR/kubelet/config.yaml" \
        --kubeconfig "$DIR/kubeconfig" --root-dir "$DIR/kubelet/root" \
        --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v 1
    daemon kube-proxy "$BIN/kube-proxy" --kubeconfig "$DIR/kubeconfig" \
        --hostname-override "$NODE_NAME" --proxy-mode iptables --cluster-cidr "$POD_CIDR" \
        --nodeport-addresses "$NODE_IP/32" --iptables-localhost-nodeports=false \
        --conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 \
        --conntrack-tcp-timeout-close-wait 0 \
        --metrics-bind-address "127.0.0.1:$(free_port)" --healthz-bind-address "127.0.0.1:$(free_port)"
    write_corefile
    daemon coredns "$BIN/coredns" -conf "$DIR/Corefile"
    publish_apiserver "$api_port"

    wait_for 120 "node $NODE_NAME Ready" \
        kc wait --for condition=Ready "node/$NODE_NAME" --timeout 1s
    # Pods wait for their ServiceAccount; the controller makes it in the default namespace soon.
    wait_for 30 "default ServiceAccount" kc get serviceaccount default
    echo "node=$NODE_NAME node_ip=$NODE_IP" >>"$DIR/ports"
    log "node $NODE_NAME Ready after $(($(date +%s) - t0)) s: KUBECONFIG=$DIR/kubeconfig"
}

stop_daemons() {  # stop_daemons NAME...: SIGTERM to all at once, SIGKILL to those left after 10 s
    local name pids=()
    for name in "$@"; do
        [ -f "$DIR/$name.pid" ] && pids+=("$(cat "$DIR/$name.pid")")
    done
    ((${#pids[@]})) || return 0
    kill "${pids[@]}" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "${pids[@]}" 2>/dev/null || break; sleep 0.1; done
    kill -9 "${pids[@]}" 2>/dev/null
    for name in "$@"; do rm -f "$DIR/$name.pid"; done
}

stop() {
    # Best effort from here on: each step runs whatever the ones before it managed.
    set +e
    [ -d "$DIR" ] || return 0
    DIR="$(cd "$DIR" && pwd)"
    # Pods first, through the kubelet, so their sandboxes, network namespaces and IPs are released.
    if [ -f "$DIR/kubelet.pid" ] && kill -0 "$(cat "$DIR/kubelet.pid")" 2>/dev/null; then
        kc delete pods --all --all-namespaces --grace-period 1 --wait=false >/dev/null 2>&1
        for _ in $(seq 1 60); do
            [ -z "$(ctr_ tasks ls -q 2>/dev/null)" ] && break
            sleep 0.5
        done
    fi
    stop_daemons "${DAEMONS[@]:1}"
    [ -S "$DIR/containerd/containerd.sock" ] && remove_containers
    stop_daemons containerd
    # Shims of this containerd outlive it; they are found by its socket path on their command line.
    for pid in $(pgrep -f "containerd-shim-runc-v2 .*-address $DIR/containerd/containerd.sock" || true); do
        kill -9 "$pid" 2>/dev/null
    done
    # The shims' and runc's directories under /run (only if empty: never another containerd's).
    rmdir /run/containerd/runc/k8s.io /run/containerd/runc /run/containerd/s /run/containerd \
        /run/netns 2>/dev/null
    [ -x "$BIN/kube-proxy" ] && "$BIN/kube-proxy" --cleanup >/dev/null 2>&1
    # Mounts under DIR (volumes, rootfs, sandbox /dev/shm), deepest first.
    findmnt -rn -o TARGET | grep "^$DIR/" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
    # Network namespaces the pods of this run left behind.
    if [ -f "$DIR/netns.before" ]; then
        comm -13 "$DIR/netns.before" <(ip netns list 2>/dev/null | awk '{print $1}' | sort) |
            grep '^cni-' | while read -r ns; do ip netns delete "$ns" 2>/dev/null; done
    fi
    # The kubelet's cgroups (kubepods...), deepest first, in every v1 hierarchy.
    for h in /sys/fs/cgroup/*/; do
        [ -d "$h/kubepods" ] && find "$h/kubepods" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    remove_kube_chains
    stop_network
    if [ -f "$DIR/sysctls.saved" ]; then
        while IFS= read -r kv; do sysctl -q -w "$kv" >/dev/null 2>&1; done <"$DIR/sysctls.saved"
    fi
    "$SRC/scripts/k8s/stop.sh" "$DIR"
    return 0
}

KCM_CONTROLLERS="statefulset-controller,garbage-collector-controller,namespace-controller"
KCM_CONTROLLERS+=",serviceaccount-controller,node-lifecycle-controller,replicaset-controller"
KCM_CONTROLLERS+=",deployment-controller,job-controller,endpointslice-controller,endpoints-controller"
KCM_CONTROLLERS+=",persistentvolume-binder-controller,persistentvolumeclaim-protection-controller"
KCM_CONTROLLERS+=",persistentvolume-protection-controller,root-ca-certificate-publisher-controller"
KCM_CONTROLLERS+=",clusterrole-aggregation-controller,ttl-after-finished-controller"
PAUSE_TAR="${SPOOL_PAUSE_IMAGE_TAR:-}"
CONTAINERD_ROOT="${SPOOL_CACHE:-$HOME/.cache/spool}/node-containerd-$(containerd --version 2>/dev/null |
    awk '{print $3}')/root"

case "$CMD" in
    start)
        [ -n "$PAUSE_TAR" ] || PAUSE_TAR=$("$SRC/scripts/k8s/images.sh" pause)
        start ;;
    import) shift 2; DIR="$(cd "$DIR" && pwd)"; import_images "$@" ;;
    stop) stop ;;
    *) die "usage: node.sh start|import|stop DIR" ;;
esac
