#!/usr/bin/env bash
# Builds and starts a Spool cluster on localhost: one etcd (Debian's etcd-server, data in
# ./data/etcd, client port 2379) and N spool-brokers (default 3) sharing it. Broker i has
# node.id i, Kafka on localhost:909(2+i), HTTP on localhost:964(4+i), data in ./data/broker-<i>
# (log in ./data/broker-<i>/broker.log). The first line printed is the bootstrap list; Ctrl-C
# stops every broker, then etcd. Extra arguments go to every spool-broker.
#   scripts/run-cluster.sh          three brokers
#   scripts/run-cluster.sh 5        five brokers
set -euo pipefail
cd "$(dirname "$0")/.."

n=3
if [[ ${1:-} =~ ^[0-9]+$ ]]; then
    n=$1
    shift
fi
((n >= 1 && n <= 50)) || { echo "run-cluster.sh: N must be 1..50" >&2; exit 2; }

# Everything but the bootstrap list goes to stderr, so `scripts/run-cluster.sh | head -1` works.
bash scripts/setup.sh >&2
command -v etcd >/dev/null || {
    echo "run-cluster.sh: etcd is missing: apt-get install etcd-server (or scripts/setup.sh --with-tests)" >&2
    exit 1
}
cmake --preset release >/dev/null
cmake --build --preset release --target spool-broker >&2

data=$PWD/data
mkdir -p "$data/etcd"
pids=()
stop_all() {
    trap - INT TERM EXIT
    echo "run-cluster.sh: stopping" >&2
    # Brokers first (each resigns and deregisters in etcd), etcd last.
    if ((${#pids[@]} > 1)); then
        kill -TERM "${pids[@]:1}" 2>/dev/null || true
        wait "${pids[@]:1}" 2>/dev/null || true
    fi
    if ((${#pids[@]} > 0)); then
        kill -TERM "${pids[0]}" 2>/dev/null || true
        wait "${pids[0]}" 2>/dev/null || true
    fi
}
trap stop_all INT TERM EXIT

etcd --name spool-local --data-dir "$data/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster spool-local=http://127.0.0.1:2380 >"$data/etcd.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    curl -fsS http://127.0.0.1:2379/health 2>/dev/null | grep -q true && break
    sleep 0.1
done
curl -fsS http://127.0.0.1:2379/health 2>/dev/null | grep -q true || {
    echo "run-cluster.sh: etcd did not start (see $data/etcd.log)" >&2
    exit 1
}

bootstrap=
for ((i = 0; i < n; i++)); do
    port=$((9092 + i))
    mkdir -p "$data/broker-$i"
    ./build/release/broker/app/spool-broker \
        --override node.id="$i" \
        --override listeners=PLAINTEXT://localhost:"$port" \
        --override http.listener=127.0.0.1:$((9644 + i)) \
        --override log.dirs="$data/broker-$i" \
        --override metadata.store=etcd \
        --override etcd.endpoints=http://127.0.0.1:2379 \
        --override etcd.prefix=/spool/local \
        --override offsets.topic.replication.factor=$((n < 3 ? n : 3)) "$@" >"$data/broker-$i/broker.log" 2>&1 &
    pids+=($!)
    bootstrap+=${bootstrap:+,}localhost:$port
done
for ((i = 0; i < n; i++)); do
    for _ in $(seq 200); do
        (exec 3<>/dev/tcp/127.0.0.1/$((9092 + i))) 2>/dev/null && break
        kill -0 "${pids[i + 1]}" 2>/dev/null || {
            echo "run-cluster.sh: broker $i exited:" >&2
            tail -n 20 "$data/broker-$i/broker.log" >&2
            exit 1
        }
        sleep 0.1
    done
done
echo "$bootstrap"
echo "run-cluster.sh: $n brokers on etcd http://127.0.0.1:2379 (prefix /spool/local);" \
    "logs in $data/broker-*/broker.log; Ctrl-C stops them" >&2
wait -n "${pids[@]}" || true
echo "run-cluster.sh: a process exited; stopping the rest" >&2
