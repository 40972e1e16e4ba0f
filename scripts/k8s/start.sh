#!/usr/bin/env bash
# Starts a throwaway control plane on loopback: etcd, kube-apiserver and (unless
# SPOOL_K8S_NO_KCM=1) kube-controller-manager, from the cache that build.sh fills.
#
#   scripts/k8s/start.sh DIR     # state, certs, logs, pids and DIR/kubeconfig go to DIR
#   scripts/k8s/stop.sh DIR
#
# Auth: a self-signed serving cert for 127.0.0.1 and a static token (user "admin" in
# system:masters) in DIR/kubeconfig; a second token for user "restricted" (no RBAC grants) lets
# tests see 403s. Ports are picked free at start and written to DIR/ports.
#
# node.sh runs the same control plane under a kubelet: SPOOL_K8S_NODE_IP adds the node's address
# to the serving cert (pods reach the apiserver there, and as the `kubernetes` Service's 10.96.0.1),
# SPOOL_K8S_KCM_CONTROLLERS replaces the controller list.
set -euo pipefail

DIR="${1:?usage: start.sh DIR}"
K8S_VERSION="${SPOOL_K8S_VERSION:-v1.37.2}"
BIN="${SPOOL_CACHE:-$HOME/.cache/spool}/k8s-${K8S_VERSION}/bin"
for b in etcd kube-apiserver; do
    [ -x "$BIN/$b" ] || { echo "missing $BIN/$b: run scripts/k8s/build.sh" >&2; exit 1; }
done
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ETCD_PORT=$(free_port); ETCD_PEER=$(free_port); API_PORT=$(free_port)
echo "etcd=$ETCD_PORT api=$API_PORT" >"$DIR/ports"

if [ ! -f "$DIR/serving.crt" ]; then
    sans="IP:127.0.0.1,DNS:localhost,IP:10.96.0.1,DNS:kubernetes.default.svc"
    [ -z "${SPOOL_K8S_NODE_IP:-}" ] || sans+=",IP:$SPOOL_K8S_NODE_IP"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=$sans" \
        -keyout "$DIR/serving.key" -out "$DIR/serving.crt" 2>/dev/null
    openssl genrsa -out "$DIR/sa.key" 2048 2>/dev/null
    openssl rsa -in "$DIR/sa.key" -pubout -out "$DIR/sa.pub" 2>/dev/null
    # The apiserver's client cert towards kubelets (logs, exec, port-forward), from a CA of its
    # own that node.sh's kubelet trusts.
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=spool-test-client-ca" \
        -keyout "$DIR/client-ca.key" -out "$DIR/client-ca.crt" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" \
        -keyout "$DIR/kubelet-client.key" -out "$DIR/kubelet-client.csr" 2>/dev/null
    openssl x509 -req -in "$DIR/kubelet-client.csr" -CA "$DIR/client-ca.crt" \
        -CAkey "$DIR/client-ca.key" -CAcreateserial -days 2 -out "$DIR/kubelet-client.crt" \
        -extfile <(echo "extendedKeyUsage=clientAuth") 2>/dev/null
    echo "spool-admin-token,admin,admin-uid,system:masters" >"$DIR/tokens.csv"
    echo "spool-restricted-token,restricted,restricted-uid," >>"$DIR/tokens.csv"
fi

"$BIN/etcd" --name spool-test --data-dir "$DIR/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-cluster "spool-test=http://127.0.0.1:$ETCD_PEER" \
    --unsafe-no-fsync --quota-backend-bytes 1073741824 \
    >"$DIR/etcd.log" 2>&1 &
echo $! >"$DIR/etcd.pid"

# A short compaction interval and no watch cache for ConfigMaps let tests reach 410 Gone for an
# old resource version quickly; every other kind keeps the watch cache (and its bookmarks).
# The apiserver's command goes into DIR/apiserver.sh so that restart-apiserver.sh can stop and
# start it again with the same flags and port (tests of "API server restarting").
{
    echo '#!/usr/bin/env bash'
    echo "BIN='$BIN' DIR='$DIR' ETCD_PORT='$ETCD_PORT' API_PORT='$API_PORT'"
    cat <<'APISERVER'
exec "$BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --etcd-compaction-interval "${SPOOL_K8S_COMPACTION:-10s}" \
    --watch-cache-sizes configmaps#0 \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
    --tls-cert-file "$DIR/serving.crt" --tls-private-key-file "$DIR/serving.key" \
    --token-auth-file "$DIR/tokens.csv" \
    --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc \
    --service-account-key-file "$DIR/sa.pub" \
    --service-account-signing-key-file "$DIR/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 \
    --allow-privileged=true \
    --kubelet-preferred-address-types InternalIP \
    --kubelet-client-certificate "$DIR/kubelet-client.crt" \
    --kubelet-client-key "$DIR/kubelet-client.key" \
    --endpoint-reconciler-type none \
    --enable-priority-and-fairness=false \
    --cert-dir "$DIR/apiserver-certs"
APISERVER
} >"$DIR/apiserver.sh"
chmod +x "$DIR/apiserver.sh"
"$DIR/apiserver.sh" >>"$DIR/apiserver.log" 2>&1 &
echo $! >"$DIR/apiserver.pid"

cat >"$DIR/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
current-context: spool-test
clusters:
- name: spool-test
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $DIR/serving.crt
contexts:
- name: spool-test
  context: {cluster: spool-test, user: admin, namespace: default}
- name: restricted
  context: {cluster: spool-test, user: restricted, namespace: default}
users:
- name: admin
  user: {token: spool-admin-token}
- name: restricted
  user: {token: spool-restricted-token}
KUBECONFIG

for _ in $(seq 1 240); do
    if curl -sf --cacert "$DIR/serving.crt" -H "Authorization: Bearer spool-admin-token" \
        "https://127.0.0.1:$API_PORT/readyz" >/dev/null 2>&1; then
        break
    fi
    if ! kill -0 "$(cat "$DIR/apiserver.pid")" 2>/dev/null; then
        echo "kube-apiserver exited; see $DIR/apiserver.log" >&2
        tail -20 "$DIR/apiserver.log" >&2
        exit 1
    fi
    sleep 0.5
done
curl -sf --cacert "$DIR/serving.crt" -H "Authorization: Bearer spool-admin-token" \
    "https://127.0.0.1:$API_PORT/readyz" >/dev/null || { echo "apiserver not ready" >&2; exit 1; }

if [ "${SPOOL_K8S_NO_KCM:-0}" != 1 ] && [ -x "$BIN/kube-controller-manager" ]; then
    "$BIN/kube-controller-manager" --kubeconfig "$DIR/kubeconfig" \
        --bind-address 127.0.0.1 --secure-port 0 \
        --controllers "${SPOOL_K8S_KCM_CONTROLLERS:-statefulset-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller}" \
        --root-ca-file "$DIR/serving.crt" \
        --leader-elect=false \
        >"$DIR/controller-manager.log" 2>&1 &
    echo $! >"$DIR/controller-manager.pid"
fi
echo "control plane ready: KUBECONFIG=$DIR/kubeconfig"
