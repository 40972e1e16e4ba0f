#!/usr/bin/env python3
"""Turns bench/replicated.sh's raw JSON lines into a markdown table: per scenario and metric the
median over rounds for Kafka (3 KRaft nodes) and Spool (3 brokers + etcd), and Spool/Kafka.
A --security run (plaintext and SASL_SSL/SCRAM-SHA-512 rows, 1 or 3 brokers) gets its own table:
each broker on each listener, Spool/Kafka over TLS, and each broker's TLS cost (TLS/plaintext).

    replicated_report.py RAW.jsonl
"""

import json
import statistics
import sys
from collections import defaultdict

# (scenario, metric key, label, higher is better, scale)
METRICS = [
    ("produce_1024B_p6", "mb_per_s", "produce 1 KiB x 6 partitions, tuned: MB/s", True, 1),
    ("produce_1024B_p6_default", "mb_per_s", "produce 1 KiB x 6 partitions, librdkafka defaults: MB/s", True, 1),
    ("produce_100B_p6", "records_per_s", "produce 100 B x 6 partitions, tuned: records/s", True, 1),
    ("latency_5MBps", "ack_p50_us", "5 MB/s offered: produce latency p50 ms", False, 1e-3),
    ("latency_5MBps", "ack_p99_us", "5 MB/s offered: produce latency p99 ms", False, 1e-3),
    ("latency_5MBps", "ack_p999_us", "5 MB/s offered: produce latency p99.9 ms", False, 1e-3),
    ("latency_5MBps", "p99_us", "5 MB/s offered: end-to-end p99 ms", False, 1e-3),
    ("produce_100B_p1", "mb_per_s", "produce 100 B x 1 partition, tuned: MB/s", True, 1),
    ("first_read_100B_p1", "mb_per_s", "default consumer, first read right after that produce: MB/s", True, 1),
    ("second_read_100B_p1", "mb_per_s", "default consumer, second read of the same records: MB/s", True, 1),
    ("first_read_100B_p1", "stalls", "first read: client back-offs (gaps >= 100 ms between records)", False, 1),
    ("second_read_100B_p1", "stalls", "second read: client back-offs (gaps >= 100 ms)", False, 1),
    ("first_read_100B_p1_deepq", "mb_per_s", "first read right after producing, deep client queue (no back-off): MB/s", True, 1),
    ("catchup", "seconds", "a broker down, restart to back in every ISR: s", False, 1),
    ("catchup", "mb_per_s", "follower catch-up: MB/s of what it missed", True, 1),
    ("failover", "ack_max_gap_ms", "kill -9 of a partition leader: producer stall (longest gap between acks) s", False, 1e-3),
    ("rss_idle", "kib", "RSS of the three brokers, idle: MiB", False, 1 / 1024),
    ("rss_load", "kib", "RSS of the three brokers, peak under load: MiB", False, 1 / 1024),
]
CPU_SCENARIOS = ["produce_1024B_p6", "produce_1024B_p6_default", "produce_100B_p6", "latency_5MBps",
                 "first_read_100B_p1", "second_read_100B_p1", "first_read_100B_p1_deepq", "catchup"]


def fmt(v):
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}" if abs(v) >= 1 else f"{v:.3f}"


def median_of(rows, key):
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float)) and not r.get("failed")]
    return (statistics.median(values), len(values)) if values else (None, 0)


# --security runs: (scenario, metric key, label, higher is better, scale); each scenario has a
# plaintext row (the name) and a SASL_SSL one (name + "_tls").
SECURITY_METRICS = [
    ("produce_1024B_p6", "mb_per_s", "produce 1 KiB x 6 partitions, acks=all: MB/s", True, 1),
    ("consume_1024B_p6", "mb_per_s", "consume 1 KiB x 6 partitions: MB/s", True, 1),
    ("latency_5MBps", "ack_p50_us", "5 MB/s offered, acks=all: produce latency p50 ms", False, 1e-3),
    ("latency_5MBps", "ack_p99_us", "5 MB/s offered, acks=all: produce latency p99 ms", False, 1e-3),
    ("latency_5MBps", "p99_us", "5 MB/s offered, acks=all: end-to-end p99 ms", False, 1e-3),
    ("produce_1024B_p6", "broker_cpu_s", "broker CPU s during the produce", False, 1),
    ("consume_1024B_p6", "broker_cpu_s", "broker CPU s during the consume", False, 1),
    ("latency_5MBps", "broker_cpu_s", "broker CPU s during the latency run", False, 1),
]


def security_table(by, info):
    brokers = info.get("brokers", 3)
    what = "one broker, RF=1" if brokers == 1 else f"{brokers} brokers, RF=3, min.insync.replicas=2"
    print(f"# TLS benchmark: SASL_SSL (SCRAM-SHA-512) and plaintext, {what}\n")
    print(f"`{info.get('command', '?')}`, {info.get('date', '?')}, Apache Kafka "
          f"{info.get('kafka_version', '?')} ({brokers} KRaft node(s)) and Spool ({brokers} "
          f"broker(s) + etcd), {info.get('cores', '?')} cores, wall {info.get('wall_s', 0) // 60} min"
          f"{' (quick: a smoke run, not a measurement)' if info.get('quick') else ''}.")
    print("The same certificates (bench/security.sh), the same client (spool-loadgen on librdkafka "
          "2.12.1, every producer acks=all), both listeners on the same brokers, alternating which "
          "goes first by round; inter-broker traffic plaintext on both. Medians over rounds "
          "(n = runs that succeeded, Kafka/Spool). TLS cost: SASL_SSL / plaintext.\n")
    print("| metric | Kafka plain | Kafka TLS | Spool plain | Spool TLS | Spool/Kafka TLS "
          "| TLS cost Kafka | TLS cost Spool | n |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    def ratio(a, b):
        return f"{a / b:.2f}x" if a is not None and b else "n/a"

    for scenario, key, label, _higher, scale in SECURITY_METRICS:
        cells = {}
        for cluster in ("kafka", "spool"):
            for suffix in ("", "_tls"):
                cells[cluster, suffix] = median_of(by.get((cluster, scenario + suffix), []), key)

        kp, kt, sp, st = (cells[c][0] for c in (("kafka", ""), ("kafka", "_tls"), ("spool", ""),
                                                 ("spool", "_tls")))
        n = f"{cells['kafka', '_tls'][1]}/{cells['spool', '_tls'][1]}"
        scaled = [fmt(v * scale if v is not None else None) for v in (kp, kt, sp, st)]
        print(f"| {label} | {' | '.join(scaled)} | {ratio(st, kt)} | {ratio(kt, kp)} "
              f"| {ratio(st, sp)} | {n} |")
    # Odd rounds run plaintext first, even rounds SASL_SSL first: the produce rate by position in
    # the round, where the second produce of a round is slower whatever its listener.
    for position, label in ((0, "first"), (1, "second")):
        def at_position(cluster, suffix):
            rows = [r for r in by.get((cluster, "produce_1024B_p6" + suffix), [])
                    if (r["round"] % 2 == 1) == ((suffix == "") == (position == 0))]
            return median_of(rows, "mb_per_s")

        cells = {(c, x): at_position(c, x) for c in ("kafka", "spool") for x in ("", "_tls")}
        kp, kt, sp, st = (cells[c][0] for c in (("kafka", ""), ("kafka", "_tls"), ("spool", ""),
                                                 ("spool", "_tls")))
        n = " ".join(f"{cells[c][1]}" for c in (("kafka", ""), ("kafka", "_tls"), ("spool", ""),
                                                 ("spool", "_tls")))
        print(f"| produce MB/s, the {label} produce of its round only | "
              f"{' | '.join(fmt(v) for v in (kp, kt, sp, st))} | {ratio(st, kt)} | "
              f"{ratio(kt, kp)} | {ratio(st, sp)} | runs {n} |")


def main():
    by = defaultdict(list)
    info = {}
    for line in open(sys.argv[1]):
        r = json.loads(line)
        if r.get("scenario") == "run_info":
            info = r
            continue
        by[(r["cluster"], r["scenario"])].append(r)
    if info.get("security"):
        security_table(by, info)
        return
    brokers = info.get("brokers", 3)
    print(f"# Replicated benchmark: Spool ({brokers} broker(s) + etcd) vs Apache Kafka ({brokers} KRaft node(s))\n")
    print(f"`{info.get('command', '?')}`, {info.get('date', '?')}, Kafka {info.get('kafka_version', '?')}, "
          f"{info.get('cores', '?')} cores, wall {info.get('wall_s', 0) // 60} min"
          f"{' (quick: a smoke run, not a measurement)' if info.get('quick') else ''}.")
    print(f"Every topic RF={3 if brokers == 3 else 1}, min.insync.replicas={2 if brokers == 3 else 1}, every producer acks=all (spool-loadgen, librdkafka). "
          f"Medians over rounds (n = runs that succeeded). Catch-up: the last broker stopped for "
          f"{info.get('down_s', '?')} s while 10 MB/s were offered.\n")
    print("| metric | Kafka | Spool | Spool/Kafka | better | n |")
    print("|---|---:|---:|---:|---|---|")
    for scenario, key, label, higher, scale in METRICS:
        k, kn = median_of(by.get(("kafka", scenario), []), key)
        s, sn = median_of(by.get(("spool", scenario), []), key)
        ratio = f"{s / k:.2f}x" if k and s is not None else "n/a"
        k = k * scale if k is not None else None
        s = s * scale if s is not None else None
        print(f"| {label} | {fmt(k)} | {fmt(s)} | {ratio} | {'higher' if higher else 'lower'} | {kn}/{sn} |")
    print("\nBroker CPU seconds per scenario (user + system, the three brokers; etcd apart):\n")
    print("| scenario | Kafka | Spool | Spool's etcd |")
    print("|---|---:|---:|---:|")
    for scenario in CPU_SCENARIOS:
        k, _ = median_of(by.get(("kafka", scenario), []), "broker_cpu_s")
        s, _ = median_of(by.get(("spool", scenario), []), "broker_cpu_s")
        e, _ = median_of(by.get(("spool", scenario), []), "etcd_cpu_s")
        print(f"| {scenario} | {fmt(k)} | {fmt(s)} | {fmt(e)} |")


if __name__ == "__main__":
    main()
