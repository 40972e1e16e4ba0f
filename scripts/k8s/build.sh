#!/usr/bin/env bash
# Builds the test cluster's Go parts from the Go module proxy and caches the binaries in
# ~/.cache/spool/k8s-<version>/bin: the control plane (kube-apiserver, kube-controller-manager,
# kube-scheduler, etcd), the node (kubelet, kube-proxy, CoreDNS) and kubectl at the same version
# (the machine image's kubectl is several minors older, outside the supported skew). Safe to
# re-run: a binary that is already built and stamped with the version is left alone.
#
#   scripts/k8s/build.sh              # everything
#   scripts/k8s/build.sh kubectl ...  # only the named parts (the e2e fixtures build what they use)
#
# k8s.io/kubernetes requires its staging modules at v0.0.0, which the proxy does not serve, so a
# small wrapper module requires k8s.io/kubernetes and replaces every staging module with the
# published v0.<minor>.<patch> release. etcd is built from go.etcd.io/etcd/server/v3's etcdmain in a
# second wrapper module (Debian's etcd 3.4 lacks features recent apiservers use), the release the
# chart's etcd image pins too (scripts/image/etcd/go.mod: keep the two at one version); CoreDNS with
# `go install` at its release tag.
set -euo pipefail

K8S_VERSION="${SPOOL_K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${SPOOL_ETCD_VERSION:-v3.7.3}"
COREDNS_VERSION="${SPOOL_COREDNS_VERSION:-v1.14.7}"
CACHE="${SPOOL_CACHE:-$HOME/.cache/spool}/k8s-${K8S_VERSION}"
BIN="$CACHE/bin"
WORK="$CACHE/src"
# Go builds take both cores for minutes: lowest priority, so they never starve a test.
NICE="${SPOOL_NICE:-nice -n 19}"
mkdir -p "$BIN" "$WORK"

KUBE_CMDS=(kube-apiserver kube-controller-manager kubectl kube-scheduler kube-proxy kubelet)
ALL_PARTS=("${KUBE_CMDS[@]}" etcd coredns)
if (($#)); then want=("$@"); else want=("${ALL_PARTS[@]}"); fi
for part in "${want[@]}"; do
    [[ " ${ALL_PARTS[*]} " == *" $part "* ]] || { echo "build.sh: unknown part $part" >&2; exit 2; }
done
wanted() { [[ " ${want[*]} " == *" $1 "* ]]; }

# Parallel CTest fixtures may build at once: one build of the cache at a time.
exec 8>"$CACHE/.build.lock"
flock 8

staging_version="v0.${K8S_VERSION#v1.}"
proxy="$(go env GOPROXY)"; proxy="${proxy%%,*}"
[ -n "$proxy" ] && [ "$proxy" != "off" ] && [ "$proxy" != "direct" ] || proxy=https://proxy.golang.org

stamp() { date +%s; }

# A build from the module proxy has no git metadata, so the binaries would report
# v0.0.0-master+$Format:%H$ and clients that check the server version (helm's kubeVersion) fail.
# The version is stamped at link time (-X), so re-stamping an old build only relinks. kubectl
# reports its client version through client-go's copy of the same variables.
minor="${K8S_VERSION#v1.}"; minor="${minor%%.*}"
LDFLAGS="-s -w"
for version_pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    LDFLAGS+=" -X $version_pkg.gitVersion=$K8S_VERSION -X $version_pkg.gitMajor=1"
    LDFLAGS+=" -X $version_pkg.gitMinor=$minor -X $version_pkg.gitTreeState=clean"
done
stamped() {
    local bin="$BIN/$1"
    [ -x "$bin" ] || return 1
    case "$1" in
        kubectl) "$bin" version --client 2>/dev/null | grep -qx "Client Version: $K8S_VERSION" ;;
        *) "$bin" --version 2>/dev/null | grep -qx "Kubernetes $K8S_VERSION" ;;
    esac
}
t0=$(stamp)

missing=()
for cmd in "${KUBE_CMDS[@]}"; do
    if wanted "$cmd" && ! stamped "$cmd"; then missing+=("$cmd"); fi
done
if ((${#missing[@]})); then
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
    } >go.mod.new
    {
        printf '//go:build tools\n\npackage tools\n\nimport (\n'
        for cmd in "${KUBE_CMDS[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$cmd"; done
        printf ')\n'
    } >tools.go
    # Keep the tidied go.mod/go.sum of an earlier run when its inputs did not change.
    cat tools.go >>go.mod.new
    if ! cmp -s go.mod.new inputs 2>/dev/null || [ ! -f go.sum ]; then
        sed '/^\/\/go:build/,$d' go.mod.new >go.mod
        $NICE go mod tidy
        mv go.mod.new inputs
    fi
    rm -f go.mod.new
    for cmd in "${missing[@]}"; do
        # Built beside and renamed: a cluster already running keeps its binary.
        $NICE go build -trimpath -ldflags "$LDFLAGS" -o "$BIN/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
        mv "$BIN/$cmd.tmp" "$BIN/$cmd"
        echo "$cmd built after $(($(stamp) - t0)) s"
    done
fi

if wanted etcd && [ ! -x "$BIN/etcd" ]; then
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

if wanted coredns && ! { [ -x "$BIN/coredns" ] && "$BIN/coredns" -version 2>/dev/null |
        grep -q "CoreDNS-${COREDNS_VERSION#v}"; }; then
    gobin="$WORK/coredns-bin"
    GOBIN="$gobin" $NICE go install -trimpath -ldflags "-s -w" \
        "github.com/coredns/coredns@${COREDNS_VERSION}"
    mv "$gobin/coredns" "$BIN/coredns"
    echo "coredns built after $(($(stamp) - t0)) s"
fi

echo "$K8S_VERSION" >"$CACHE/VERSION"
echo "k8s parts ready in $BIN ($(($(stamp) - t0)) s)"
