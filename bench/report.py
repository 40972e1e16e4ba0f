#!/usr/bin/env python3
"""Turns bench/run.sh's raw JSON lines into a markdown table of medians and Spool/Kafka ratios."""

import argparse
import datetime
import json
import statistics
from collections import defaultdict

# scenario prefix -> (metric key, unit, higher is better)
METRICS = [
    ("produce_", "mb_per_s", "MB/s", True),
    ("produce_", "records_per_s", "records/s", True),
    ("consume_", "mb_per_s", "MB/s", True),
    ("latency_", "p50_us", "p50 µs", False),
    ("latency_", "p99_us", "p99 µs", False),
    ("latency_", "p999_us", "p99.9 µs", False),
    ("rss_idle", "kib", "RSS idle KiB", False),
    ("rss_load", "kib", "RSS peak KiB", False),
    ("first_produce", "ms_since_start", "start to first produce ms", False),
]


def median_of(rows, key):
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float)) and not r.get("failed")]
    return statistics.median(values) if values else None


def fmt(v):
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("raw")
    parser.add_argument("--machine", default="")
    args = parser.parse_args()

    by = defaultdict(list)
    machine = {}
    with open(args.raw) as f:
        for line in f:
            row = json.loads(line)
            if row["broker"] == "machine":
                machine[row["scenario"]] = row
            by[(row["broker"], row["scenario"])].append(row)

    scenarios = sorted({s for (b, s) in by if b in ("kafka", "spool")})
    rounds = max((r["round"] for rows in by.values() for r in rows), default=0)
    print(f"Benchmark {datetime.date.today().isoformat()} on {args.machine}; "
          f"{rounds} rounds alternating Kafka and Spool; medians. Same spool-loadgen (librdkafka) "
          f"for both: linger.ms=5, batch.size=1000000, no compression; latency runs linger.ms=0.\n")
    print("| scenario | metric | Kafka | Spool | Spool/Kafka | mock ceiling | Spool/ceiling |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for scenario in scenarios:
        for prefix, key, unit, _higher in METRICS:
            if not scenario.startswith(prefix):
                continue
            kafka = median_of(by.get(("kafka", scenario), []), key)
            spool = median_of(by.get(("spool", scenario), []), key)
            if kafka is None and spool is None:
                continue
            ceiling = median_of(by.get(("mock", scenario), []), key)
            ratio = f"{spool / kafka:.2f}" if kafka and spool else "n/a"
            of_ceiling = f"{spool / ceiling:.2f}" if ceiling and spool else ""
            print(f"| {scenario} | {unit} | {fmt(kafka)} | {fmt(spool)} | {ratio} | "
                  f"{fmt(ceiling) if ceiling else ''} | {of_ceiling} |")
    if machine:
        disk = machine.get("disk_seq_write", {}).get("value", "n/a")
        tcp = machine.get("loopback_tcp", {}).get("mb_per_s", "n/a")
        print(f"\nMachine limits in the same run: sequential disk write {disk} (dd, fdatasync); "
              f"loopback TCP {tcp} MB/s (iperf3).")


if __name__ == "__main__":
    main()
