#!/usr/bin/env bash
# Installs exactly the Debian packages Spool's build and tests need. Idempotent: packages already
# present are skipped, so re-running is cheap. Used by README's two commands and by .ci/run.
set -euo pipefail

BUILD_PACKAGES=(
    build-essential cmake ninja-build pkg-config python3 ccache
    libboost1.74-dev libboost-system1.74-dev libboost-program-options1.74-dev
    libcpprest-dev libyaml-cpp-dev prometheus-cpp-dev nlohmann-json3-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    libspdlog-dev libfmt-dev libssl-dev libzstd-dev liblz4-dev libsnappy-dev zlib1g-dev
)
TEST_PACKAGES=(  # libfuse3-dev, fuse3: the power-cut file system of tests/durability
    kcat librdkafka-dev libfuse3-dev fuse3 clang libclang-rt-14-dev clang-format curl openssl prometheus
    maven openjdk-17-jdk-headless  # Kafka jars, CLI tools and broker for the compat suite
    python3-venv  # the confluent-kafka Python venv (scripts/peers/fetch-python.sh)
    python3-yaml python3-matplotlib  # monitoring tests; docs/img pictures (scripts/dashboard-pictures.py)
    etcd-server etcd-client  # the etcd client's and the etcd metadata store's tests (etcdctl too)
    # The e2e node (scripts/k8s/node.sh): container runtime, bridge CNI, kube-proxy's and the
    # kubelet's tools, and the images made without a registry (scripts/k8s/images.sh).
    containerd runc containernetworking-plugins iptables conntrack socat iproute2
    mmdebstrap podman
)

BENCH_PACKAGES=(
    iperf3 librdkafka-dev
)

want=("${BUILD_PACKAGES[@]}")
case "${1:-}" in
    --with-tests) want+=("${TEST_PACKAGES[@]}") ;;
    --bench) want+=("${BENCH_PACKAGES[@]}") ;;
esac

missing=()
for pkg in "${want[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$pkg")
    fi
done

if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    SUDO=""
    if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    echo "setup: all packages present"
fi
