#!/usr/bin/env bash
# Builds the test control plane (kube-apiserver, kube-controller-manager, etcd) from the Go module
# proxy and caches the binaries in ~/.cache/spool/k8s-<version>/bin. Safe to re-run: a complete
# cache is left alone.
#
# k8s.io/kubernetes requires its staging modules at v0.0.0, which the proxy does not serve, so a
# small wrapper module requires k8s.io/kubernetes and replaces every staging module with the
# published v0.<minor>.<patch> release. etcd is built from go.etcd.io/etcd/server/v3's etcdmain in a
# second wrapper module (Debian's etcd 3.4 lacks features recent apiservers use).
set -euo pipefail

K8S_VERSION="${SPOOL_K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${SPOOL_ETCD_VERSION:-v3.7.3}"
CACHE="${SPOOL_CACHE:-$HOME/.cache/spool}/k8s-${K8S_VERSION}"
BIN="$CACHE/bin"
WORK="$CACHE/src"
NICE="${SPOOL_NICE:-nice -n 15}"
mkdir -p "$BIN" "$WORK"

staging_version="v0.${K8S_VERSION#v1.}"
proxy="$(go env GOPROXY)"; proxy="${proxy%%,*}"
[ -n "$proxy" ] && [ "$proxy" != "off" ] && [ "$proxy" != "direct" ] || proxy=https://proxy.golang.org

stamp() { date +%s; }

# A build from the module proxy has no git metadata, so the binaries would report
# v0.0.0-master+$Format:%H$ and clients that check the server version (helm's kubeVersion) fail.
# The version is stamped at link time (-X), so re-stamping an old build only relinks.
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
version_pkg=k8s.io/component-base/version
LDFLAGS="-s -w -X $version_pkg.gitVersion=$K8S_VERSION -X $version_pkg.gitMajor=1 \
-X $version_pkg.gitMinor=$minor -X $version_pkg.gitTreeState=clean"
stamped() { [ -x "$1" ] && "$1" --version 2>/dev/null | grep -qx "Kubernetes $K8S_VERSION"; }
t0=$(stamp)

if ! stamped "$BIN/kube-apiserver" || ! stamped "$BIN/kube-controller-manager"; then
    mod="$WORK/kube"
    mkdir -p "$mod"
    cd "$mod"
    {
        echo "module spool.dev/k8s-control-plane"
        echo
        echo "go 1.26"
        echo
        echo "require k8s.io/kubernetes ${K8S_VERSION}"
        echo
        echo "replace ("
        curl -fsSL "$proxy/k8s.io/kubernetes/@v/${K8S_VERSION}.mod" |
            sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' |
            while read -r m; do
                # Only staging modules that are published; the rest are not in the build graph.
                if curl -fsS -o /dev/null "$proxy/$m/@v/${staging_version}.info" 2>/dev/null; then
                    echo "    $m => $m $staging_version"
                fi
            done
        echo ")"
    } >go.mod
    cat >tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
)
GO
    $NICE go mod tidy
    # Built beside and renamed: a control plane already running keeps its binary.
    $NICE go build -trimpath -ldflags "$LDFLAGS" -o "$BIN/kube-apiserver.tmp" \
        k8s.io/kubernetes/cmd/kube-apiserver
    mv "$BIN/kube-apiserver.tmp" "$BIN/kube-apiserver"
    echo "kube-apiserver built after $(($(stamp) - t0)) s"
    $NICE go build -trimpath -ldflags "$LDFLAGS" -o "$BIN/kube-controller-manager.tmp" \
        k8s.io/kubernetes/cmd/kube-controller-manager
    mv "$BIN/kube-controller-manager.tmp" "$BIN/kube-controller-manager"
    echo "kube-controller-manager built after $(($(stamp) - t0)) s"
fi

if [ ! -x "$BIN/etcd" ]; then
    mod="$WORK/etcd"
    mkdir -p "$mod"
    cd "$mod"
    cat >go.mod <<GOMOD
module spool.dev/etcd

go 1.26

require go.etcd.io/etcd/server/v3 ${ETCD_VERSION}
GOMOD
    cat >main.go <<'GO'
// etcd's own main, built from the published server module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
    $NICE go mod tidy
    $NICE go build -trimpath -ldflags "-s -w" -o "$BIN/etcd" .
    echo "etcd built after $(($(stamp) - t0)) s"
fi

echo "$K8S_VERSION" >"$CACHE/VERSION"
echo "control plane ready in $BIN ($(($(stamp) - t0)) s)"
