#!/usr/bin/env bash
# What one /metrics scrape costs a real spool-broker with N partitions (default 10000; the open
# files limit must allow ~3 per partition): one topic auto-created with N partitions, a group with
# a committed offset on every partition (Kafka's kafka-consumer-groups --reset-offsets, from the
# peer cache), then 20 scrapes plain and 20 with Accept-Encoding: gzip (what Prometheus sends):
# size, wall time, and broker CPU per scrape from /proc. tests/monitoring/scrape_cost_check.py
# (CTest monitoring_scrape_cost) checks #18's bound the same way.
#
# usage: scrape_live.sh <spool-broker> [partitions]
set -euo pipefail
broker=$1 parts=${2:-10000}
need=$((parts * 3 * 10 / 9 + 1000))  # 3 per partition, creates refused past 90% of the limit
(($(ulimit -n) >= need)) || { echo "open files limit $(ulimit -n) < $need for $parts partitions"; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
work=$(mktemp -d) kp=$(free_port) hp=$(free_port)
"$broker" --override listeners="PLAINTEXT://127.0.0.1:$kp" --override http.listener="127.0.0.1:$hp" \
    --override log.dirs="$work/data" --override num.partitions="$parts" \
    --override spool.max.partitions.per.broker=$((parts + 100)) --override spool.topic.fds.per.partition=3 \
    >"$work/broker.log" 2>&1 &
pid=$!
trap 'kill $pid; wait $pid || true; rm -rf "$work"' EXIT
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$hp/readyz" && break; sleep 0.2; done
echo x | timeout 300 kcat -P -b "127.0.0.1:$kp" -t big -p 0 -X socket.timeout.ms=240000
java -cp "$HOME/.cache/spool/kafka-4.1.1/libs/*" org.apache.kafka.tools.consumer.group.ConsumerGroupCommand \
    --bootstrap-server "127.0.0.1:$kp" --group g --topic big --reset-offsets --to-earliest --execute >/dev/null
url=http://127.0.0.1:$hp/metrics
# Committed offsets reach the HTTP view a moment after the commit is acknowledged.
for _ in $(seq 120); do
    (($(curl -s "$url" | grep -c '^spool_consumer_group_lag{' || true) >= parts)) && break
    sleep 0.5
done
echo "partitions: $(curl -s "$url" | awk '/^spool_cluster_partitions /{print $2}'), lag series: $(curl -s "$url" | grep -c '^spool_consumer_group_lag{')"
tick=$(getconf CLK_TCK)
for encoding in identity gzip; do
    t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
    for i in $(seq 20); do
        curl -s -H "Accept-Encoding: $encoding" -o /dev/null -w "%{time_total} %{size_download}\n" "$url"
    done >"$work/scrapes"
    t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
    sort -n "$work/scrapes" | awk -v cpu="$(( (t1 - t0) * 1000 / tick / 20 ))" -v enc="$encoding" \
        '{t[NR]=$1; b=$2} END {printf "%s: bytes %d, wall min %.0f ms median %.0f ms max %.0f ms, broker CPU %d ms per scrape\n", enc, b, t[1]*1000, t[int((NR+1)/2)]*1000, t[NR]*1000, cpu}'
done
