#!/usr/bin/env bash
# Container images for the test node, made here without a registry, as docker archives for
# `ctr images import` (node.sh import), cached in ~/.cache/spool/images/ keyed by their inputs.
# Prints the archive's path.
#
#   scripts/k8s/images.sh pause               # the pod sandbox image (pause.c, static)
#   scripts/k8s/images.sh base                # debian:12-slim itself (base-image.sh)
#   scripts/k8s/images.sh broker BUILD_DIR    # spool-broker from the Dockerfile, on the local base
#   scripts/k8s/images.sh operator BUILD_DIR  # spool-operator, the same way
#   scripts/k8s/images.sh etcd                # the chart's etcd (etcd 3.7 from scripts/image/etcd)
#   scripts/k8s/images.sh kcat                # a client pod's kcat (Debian's)
#
# The broker (operator) image is the Dockerfile's `broker` (`operator`) target built FROM the Debian
# base that base-image.sh makes. By default its context holds BUILD_DIR's release binary in image/bin/, which
# the Dockerfile takes (and strips) instead of compiling the whole tree again inside the image (on
# 2 cores the better part of an hour); SPOOL_IMAGE_BINARIES=build builds from the repository's
# context, compiling in the image.
set -euo pipefail
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE="${SPOOL_CACHE:-$HOME/.cache/spool}/images"
mkdir -p "$CACHE"
# One build of each image at a time (parallel fixtures); another image is not held up.
lock() { exec 6>"$CACHE/.$1.lock"; flock 6; }
hash_of() { cat "$@" | sha256sum | cut -c1-16; }
# keep_only TAR: the new archive replaces the older ones of the same image.
keep_only() { find "$CACHE" -maxdepth 1 -name "$(basename "${1%-*}")-*.tar" ! -path "$1" -delete; }

pause_image() {
    lock pause
    local key tar
    key=$(hash_of "$SRC/scripts/k8s/pause.c" "${BASH_SOURCE[0]}")
    tar="$CACHE/pause-$key.tar"
    if [ ! -f "$tar" ]; then
        local work; work=$(mktemp -d)
        mkdir -p "$work/root"
        cc -O2 -static -s -o "$work/root/pause" "$SRC/scripts/k8s/pause.c"
        tar -C "$work/root" -cf "$work/root.tar" pause
        podman import -q --change 'ENTRYPOINT ["/pause"]' --change 'USER 65535:65535' \
            "$work/root.tar" registry.k8s.io/pause:3.10 >/dev/null
        podman save -q --format docker-archive -o "$tar.tmp" registry.k8s.io/pause:3.10
        mv "$tar.tmp" "$tar"
        keep_only "$tar"
        rm -rf "$work"
    fi
    echo "$tar"
}

base_image() {
    lock base
    "$SRC/scripts/k8s/base-image.sh" >&2
    local id tar
    id=$(podman image inspect --format '{{.Id}}' docker.io/library/debian:12-slim)
    tar="$CACHE/debian-12-slim-${id:0:16}.tar"
    if [ ! -f "$tar" ]; then
        podman save -q --format docker-archive -o "$tar.tmp" docker.io/library/debian:12-slim
        mv "$tar.tmp" "$tar"
        keep_only "$tar"
    fi
    echo "$tar"
}

# build_target TARGET CONTEXT TAG TAR WORK: the Dockerfile's TARGET on the local base, saved as TAR.
build_target() {
    local target="$1" context="$2" tag="$3" tar="$4" work="$5"
    local old_id; old_id=$(podman image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
    # --network=host: the image's apt-get reaches Debian's mirror the way the host does,
    # without a build network (which would turn on forwarding and add NAT rules).
    nice -n 19 podman build --pull=never --network=host --target "$target" \
        -f "$SRC/Dockerfile" -t "$tag" "$context" >"$work/build.log" 2>&1 ||
        { tail -30 "$work/build.log" >&2; echo "images: podman build failed" >&2; exit 1; }
    podman save -q --format docker-archive -o "$tar.tmp" "$tag"
    mv "$tar.tmp" "$tar"
    keep_only "$tar"
    # The image this one replaces would stay in podman's store, untagged, at every rebuild.
    if [ -n "$old_id" ] && [ "$old_id" != "$(podman image inspect --format '{{.Id}}' "$tag")" ]; then
        podman rmi "$old_id" >/dev/null 2>&1 || true
    fi
}

app_image() {  # app_image broker|operator BUILD_DIR: the Dockerfile's target of that name
    local target="$1" build_dir="${2:?usage: images.sh $1 BUILD_DIR}" mode="${SPOOL_IMAGE_BINARIES:-prebuilt}"
    local binary="$build_dir/$target/app/spool-$target"
    [ -x "$binary" ] || { echo "images: $binary missing: build the spool-$target target" >&2; exit 1; }
    lock "$target"
    "$SRC/scripts/k8s/base-image.sh" >&2
    local base key tar tag="localhost/spool-$target:e2e"
    base=$(podman image inspect --format '{{.Id}}' docker.io/library/debian:12)
    key=$( { echo "$mode $base"; cat "$SRC/Dockerfile" "$SRC/scripts/setup.sh" \
        "$SRC/scripts/image/runtime-packages.sh";
        [ "$mode" = build ] && git -C "$SRC" rev-parse HEAD || cat "$binary"; } | sha256sum | cut -c1-16)
    tar="$CACHE/spool-$target-$key.tar"
    if [ ! -f "$tar" ]; then
        local work t0; work=$(mktemp -d); t0=$(date +%s)
        local context="$SRC"
        if [ "$mode" = prebuilt ]; then
            # A context of only the binary and the two scripts: the tree (and its build/) stays out.
            context="$work/context"
            mkdir -p "$context/scripts/image" "$context/image/bin"
            cp "$SRC/scripts/setup.sh" "$context/scripts/"
            cp "$SRC/scripts/image/runtime-packages.sh" "$context/scripts/image/"
            cp "$binary" "$context/image/bin/"
        fi
        build_target "$target" "$context" "$tag" "$tar" "$work"
        echo "images: $tag built in $(($(date +%s) - t0)) s" >&2
        rm -rf "$work"
    fi
    echo "$tar"
}

# The chart's etcd: the Dockerfile's `etcd` target, with etcd, etcdctl and etcdutl built here from
# scripts/image/etcd (the module the Dockerfile builds, with the same Go toolchain, which the go
# command fetches from the module proxy as golang.org/toolchain) into the context's
# scripts/image/etcd/bin/, which the Dockerfile takes instead of building in the image (that would
# fetch the toolchain and every module again). Keyed by the module, the toolchain and the Dockerfile.
etcd_image() {
    lock etcd
    "$SRC/scripts/k8s/base-image.sh" >&2
    local module="$SRC/scripts/image/etcd" base key tar tag="localhost/spool-etcd:e2e"
    local go_version; go_version=$(sed -n 's/^ARG GO_VERSION=//p' "$SRC/Dockerfile")
    base=$(podman image inspect --format '{{.Id}}' docker.io/library/debian:12)
    key=$( { echo "etcd $base $go_version"; cat "$SRC/Dockerfile" "${BASH_SOURCE[0]}" \
        "$module/go.mod" "$module/go.sum" "$module"/*.go; } | sha256sum | cut -c1-16)
    tar="$CACHE/spool-etcd-$key.tar"
    if [ ! -f "$tar" ]; then
        local work t0; work=$(mktemp -d); t0=$(date +%s)
        mkdir -p "$work/context/scripts/image"
        cp -r "$module" "$work/context/scripts/image/etcd"
        rm -rf "$work/context/scripts/image/etcd/bin"
        (
            cd "$work/context/scripts/image/etcd"
            export GOTOOLCHAIN="go$go_version" GOFLAGS=-mod=readonly CGO_ENABLED=0
            nice -n 19 go build -trimpath -ldflags "-s -w" -o bin/etcd .
            nice -n 19 go build -trimpath -ldflags "-s -w" -o bin/etcdctl go.etcd.io/etcd/etcdctl/v3
            nice -n 19 go build -trimpath -ldflags "-s -w" -o bin/etcdutl go.etcd.io/etcd/etcdutl/v3
        ) >"$work/go-build.log" 2>&1 ||
            { tail -30 "$work/go-build.log" >&2; echo "images: etcd go build failed" >&2; exit 1; }
        build_target etcd "$work/context" "$tag" "$tar" "$work"
        echo "images: $tag built in $(($(date +%s) - t0)) s" >&2
        rm -rf "$work"
    fi
    echo "$tar"
}

package_image() {  # package_image kcat: a Dockerfile target of Debian packages only
    local target="$1"
    lock "$target"
    "$SRC/scripts/k8s/base-image.sh" >&2
    local base key tar tag="localhost/spool-$target:e2e"
    base=$(podman image inspect --format '{{.Id}}' docker.io/library/debian:12)
    key=$( { echo "$target $base"; cat "$SRC/Dockerfile" "${BASH_SOURCE[0]}"; } | sha256sum | cut -c1-16)
    tar="$CACHE/spool-$target-$key.tar"
    if [ ! -f "$tar" ]; then
        local work t0; work=$(mktemp -d); t0=$(date +%s)
        # These stages copy nothing: an empty context (buildah skips the stages they do not use).
        mkdir -p "$work/context"
        build_target "$target" "$work/context" "$tag" "$tar" "$work"
        echo "images: $tag built in $(($(date +%s) - t0)) s" >&2
        rm -rf "$work"
    fi
    echo "$tar"
}

case "${1:-}" in
    pause) pause_image ;;
    base) base_image ;;
    broker | operator) app_image "$@" ;;
    etcd) etcd_image ;;
    kcat) package_image "$1" ;;
    *) echo "usage: images.sh pause | base | broker BUILD_DIR | operator BUILD_DIR | etcd | kcat" >&2; exit 2 ;;
esac
