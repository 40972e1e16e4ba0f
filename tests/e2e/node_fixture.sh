#!/usr/bin/env bash
# CTest fixture of the node tests: makes the images (cached, scripts/k8s/images.sh), starts the
# single-node cluster in DIR (scripts/k8s/node.sh) and imports the images into its containerd;
# `stop` tears it all down. DIR/images lists what was imported, as tag=archive lines.
#
#   node_fixture.sh start DIR SRC BUILD_DIR
#   node_fixture.sh stop DIR SRC
set -euo pipefail
CMD="$1" DIR="$2" SRC="$3"
[ "$(id -u)" = 0 ] || { echo "node e2e tests need root (bridge, iptables, cgroups, mounts)" >&2; exit 1; }
case "$CMD" in
start)
    BUILD_DIR="$4"
    t0=$(date +%s)
    base=$("$SRC/scripts/k8s/images.sh" base)
    broker=$("$SRC/scripts/k8s/images.sh" broker "$BUILD_DIR")
    operator=$("$SRC/scripts/k8s/images.sh" operator "$BUILD_DIR")
    etcd=$("$SRC/scripts/k8s/images.sh" etcd)
    kcat=$("$SRC/scripts/k8s/images.sh" kcat)
    t1=$(date +%s)
    "$SRC/scripts/k8s/node.sh" start "$DIR"
    "$SRC/scripts/k8s/node.sh" import "$DIR" "$base" "$broker" "$operator" "$etcd" "$kcat"
    printf '%s\n' "docker.io/library/debian:12-slim=$base" "localhost/spool-broker:e2e=$broker" \
        "localhost/spool-operator:e2e=$operator" "localhost/spool-etcd:e2e=$etcd" \
        "localhost/spool-kcat:e2e=$kcat" >"$DIR/images"
    echo "node fixture: images $((t1 - t0)) s, node Ready + imports $(($(date +%s) - t1)) s"
    ;;
stop) "$SRC/scripts/k8s/node.sh" stop "$DIR" ;;
*) echo "usage: node_fixture.sh start|stop DIR SRC [BUILD_DIR]" >&2; exit 2 ;;
esac
