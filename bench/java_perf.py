#!/usr/bin/env python3
"""Turns the summary of Kafka's own perf tools (the Java client) into the JSON line spool-loadgen
prints, so bench/run.sh records and bench/report.py renders both alike.

    java_perf.py produce RECORD_SIZE < kafka-producer-perf-test output
    java_perf.py consume RECORD_SIZE < kafka-consumer-perf-test --hide-header output

MB here are 10^6 bytes of record values, as spool-loadgen counts them (the tools print MiB).
Consume rates are the tool's fetch rates: from the first fetch on, the group join not counted
(spool-loadgen likewise counts from the first record).
"""

import json
import re
import sys

# "5000000 records sent, 612345.2 records/sec (58.40 MB/sec), 3.45 ms avg latency, ..."
PRODUCE = re.compile(r"^(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), "
                     r"([\d.]+) ms avg latency, ([\d.]+) ms max latency")


def produce(lines, size):
    for line in reversed(lines):
        m = PRODUCE.match(line.strip())
        if m:
            records, per_s = int(m.group(1)), float(m.group(2))
            return {"mode": "produce", "records": records, "failed": 0,
                    "seconds": round(records / per_s, 3) if per_s else None,
                    "records_per_s": round(per_s), "mb_per_s": round(per_s * size / 1e6, 2),
                    "avg_latency_ms": float(m.group(4))}
    return None


def consume(lines, size):
    # start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
    # rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
    for line in reversed(lines):
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 10:
            continue
        try:
            records = int(fields[4])
            fetch_ms = float(fields[7])
            rebalance_ms = float(fields[6])
        except ValueError:
            continue
        if records <= 0 or fetch_ms <= 0:
            return {"mode": "consume", "failed": 1, "error": "no records"}
        seconds = fetch_ms / 1000
        return {"mode": "consume", "records": records, "failed": 0, "seconds": round(seconds, 3),
                "records_per_s": round(records / seconds),
                "mb_per_s": round(records * size / 1e6 / seconds, 2),
                "group_join_ms": rebalance_ms}
    return None


def main():
    mode, size = sys.argv[1], int(sys.argv[2])
    lines = sys.stdin.read().splitlines()
    result = (produce if mode == "produce" else consume)(lines, size)
    if result is None:
        tail = " | ".join(lines[-3:])[-200:]
        result = {"failed": 1, "error": "no summary in the tool's output", "output": tail}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
