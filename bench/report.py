#!/usr/bin/env python3
"""Turns bench/run.sh's raw JSON lines into a markdown table of medians, Spool/Kafka ratios and
Spool as a fraction of the librdkafka mock-cluster ceiling.

    report.py RAW.jsonl [--readme README.md]   print the table; with --readme also write it
                                               between <!-- bench:begin --> and <!-- bench:end -->
    report.py --describe-machine DIR           print this machine (CPU, cores, RAM, kernel, the
                                               disk holding DIR) as JSON, for run.sh to record
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
from collections import defaultdict

README_BEGIN = "<!-- bench:begin -->"
README_END = "<!-- bench:end -->"

# (scenario prefix, metric key, unit, higher is better, has a mock ceiling)
METRICS = [
    ("produce_", "mb_per_s", "MB/s", True, True),
    ("produce_", "records_per_s", "records/s", True, True),
    ("consume_", "mb_per_s", "MB/s", True, True),
    ("consume_", "records_per_s", "records/s", True, True),
    ("consume_", "first_record_ms", "consumer start to first record ms", False, False),
    ("latency_", "p50_us", "p50 µs", False, False),
    ("latency_", "p99_us", "p99 µs", False, False),
    ("latency_", "p999_us", "p99.9 µs", False, False),
    ("rss_idle", "mib", "RSS idle MiB", False, False),
    ("rss_load", "mib", "RSS peak under load MiB", False, False),
    ("first_produce", "ms_since_start", "process start to first acked produce ms", False, False),
]

SCENARIO_ORDER = ["produce_", "consume_", "latency_", "first_produce", "rss_idle", "rss_load"]


def values_of(rows, key):
    return [r[key] for r in rows if isinstance(r.get(key), (int, float)) and not r.get("failed")]


def fmt(v):
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}" if abs(v) >= 1 else f"{v:.3f}"


# The metric rows that carry the broker-CPU cell (one per scenario).
CPU_ON = ("mb_per_s", "p99_us")


def cpu_cell(by, scenario):
    """Median broker CPU seconds (user + system) over a scenario's runs, Kafka / Spool."""
    def median_cpu(broker):
        values = values_of(by.get((broker, scenario), []), "broker_cpu_s")
        return statistics.median(values) if values else None

    kafka, spool = median_cpu("kafka"), median_cpu("spool")
    if kafka is None and spool is None:
        return ""
    ratio = f" ({spool / kafka:.2f}x)" if kafka and spool is not None else ""
    return f"{fmt(kafka)} / {fmt(spool)}{ratio}"


def spread(values):
    """(max - min) / median across runs, as a percentage; '–' with fewer than two runs."""
    if len(values) < 2 or not statistics.median(values):
        return "–"
    return f"{(max(values) - min(values)) / statistics.median(values) * 100:.0f}%"


def scenario_key(name):
    for i, prefix in enumerate(SCENARIO_ORDER):
        if name.startswith(prefix):
            return (i, name)
    return (len(SCENARIO_ORDER), name)


def load(raw_path):
    by = defaultdict(list)
    machine = {}
    with open(raw_path) as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            if "kib" in row:
                row["mib"] = row["kib"] / 1024
            if row["broker"] == "machine":
                machine[row["scenario"]] = row
            else:
                by[(row["broker"], row["scenario"])].append(row)
    return by, machine


def render(by, machine):
    out = []
    info = machine.get("run_info", {})
    desc = machine.get("machine_info", {})
    rounds = max((r["round"] for (b, _), rows in by.items() if b in ("kafka", "spool")
                  for r in rows), default=0)
    out.append(f"Benchmark of {info.get('date', 'n/a')} on {desc.get('summary', 'n/a')}. "
               f"{rounds} round(s) alternating Kafka {info.get('kafka_version', '')}, Spool and "
               f"the mock cluster; medians. Command: `{info.get('command', 'n/a')}` "
               f"(wall time {info.get('wall_s', 0) / 60:.0f} min"
               f"{', --quick: smoke sizes, not for publishing' if info.get('quick') else ''}).")
    out.append("")
    out.append("| scenario | metric | Kafka | Spool | Spool/Kafka | mock ceiling¹ | Spool/ceiling "
               "| spread Kafka / Spool⁶ | broker CPU s Kafka / Spool⁷ |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    verdict = defaultdict(lambda: [0, 0])  # kind -> [rows meeting the bar, rows]
    scenarios = sorted({s for (b, s) in by if b in ("kafka", "spool")}, key=scenario_key)
    for scenario in scenarios:
        for prefix, key, unit, higher, has_ceiling in METRICS:
            if not scenario.startswith(prefix):
                continue
            kafka_values = values_of(by.get(("kafka", scenario), []), key)
            spool_values = values_of(by.get(("spool", scenario), []), key)
            if not kafka_values and not spool_values:
                continue
            kafka = statistics.median(kafka_values) if kafka_values else None
            spool = statistics.median(spool_values) if spool_values else None
            ceiling_values = values_of(by.get(("mock", scenario), []), key) if has_ceiling else []
            ceiling = statistics.median(ceiling_values) if ceiling_values else None
            ratio = spool / kafka if kafka and spool is not None else None
            if has_ceiling:
                ceiling_cell = fmt(ceiling)
                of_ceiling = f"{spool / ceiling:.2f}" if ceiling and spool is not None else "n/a"
            else:
                ceiling_cell, of_ceiling = "–²", "–"
            out.append(f"| {scenario} | {unit} | {fmt(kafka)} | {fmt(spool)} | "
                       f"{'n/a' if ratio is None else f'{ratio:.2f}'} | {ceiling_cell} | "
                       f"{of_ceiling} | {spread(kafka_values)} / {spread(spool_values)} | "
                       f"{cpu_cell(by, scenario) if key in CPU_ON else ''} |")
            if ratio is None:
                continue
            if key == "mb_per_s":
                v = verdict["throughput"]
                v[0] += ratio >= 1
                v[1] += 1
                verdict["throughput_2x"][0] += ratio >= 2
                verdict["throughput_2x"][1] += 1
            elif key == "p99_us":
                verdict["p99"][0] += ratio <= 1
                verdict["p99"][1] += 1
                verdict["p99_fifth"][0] += ratio <= 0.2
                verdict["p99_fifth"][1] += 1
            elif key == "mib":
                verdict["memory_tenth"][0] += ratio <= 0.1
                verdict["memory_tenth"][1] += 1

    def count(kind):
        met, total = verdict[kind]
        return f"{met} of {total}"

    out.append("")
    out.append(f"Issue #9 bar: Spool's throughput ≥ Kafka's in {count('throughput')} throughput rows "
               f"(≥ 2x in {count('throughput_2x')}); p99 ≤ Kafka's in {count('p99')} latency "
               f"scenarios (≤ 1/5 in {count('p99_fifth')}); memory ≤ 1/10 of Kafka's in "
               f"{count('memory_tenth')} memory rows.")
    out.append("")
    disk = machine.get("disk_seq_write", {}).get("value", "n/a")
    tcp = machine.get("loopback_tcp", {}).get("mb_per_s", "n/a")
    out.append(f"Machine limits in the same run: sequential write to the data disk {disk} (dd 1 GiB, "
               f"fdatasync); loopback TCP {tcp} MB/s (iperf3, one stream).")
    out.append("")
    out.append(
        "Same `spool-loadgen` (librdkafka "
        f"{info.get('librdkafka', '')}) for every broker. Rows without a suffix are tuned: "
        "linger.ms=5, batch.size=1000000, no compression, records without keys (librdkafka's "
        "sticky partitioner); one acknowledged record before the clock starts; consumer "
        "fetch.wait.max.ms=100, queued.min.messages=10000000, queued.max.messages.kbytes=2097151 "
        "(see 3); latency runs linger.ms=0, acks=1, 1 partition, 2 s warm-up not counted. "
        "`_default` rows: the same scenarios with librdkafka's default settings (what users run; "
        "only the scenario's acks set). `_java` rows: Kafka's own kafka-producer-perf-test and "
        "kafka-consumer-perf-test (the Java client, from the Kafka distribution above) with the "
        "Java client's defaults but the scenario's acks; the consumer subscribes as a group and "
        "its rate is the tool's fetch rate, the group join not counted (see 8). Neither broker "
        "fsyncs per write (both defaults).")
    out.append("")
    out.append(
        "1. Ceiling: the same load generator against librdkafka's in-process mock cluster "
        "(`rdkafka_mock.h`): a server with no disk and no durability work, whose one thread runs "
        "inside the client's process and shares the cores with it, as a real broker does here. "
        "It is a reference point rather than a strict bound: its single thread copies every "
        "batch into a fresh allocation, so a broker can beat it (Spool/ceiling > 1), most often "
        "with 100-byte records. acks=-1 is acks=1 there (one replica). Consume: the mock keeps "
        "only 5 MiB per partition and answers a Fetch with one stored batch per partition, so "
        "the consume ceiling writes a 4 MiB window per partition and re-reads it, seeking back "
        "at each partition's end, until it has read as many records as the brokers serve.")
    out.append(
        "2. No mock ceiling for latency: the mock answers a Fetch with no new data only after "
        "the full fetch.wait.max.ms and is not woken by a produce, so its latency measures that "
        "timer, not a broker.")
    out.append(
        "3. Consume rates count from the first record on; the consumer's start-up (connect, "
        "offset lookup; librdkafka waits about 0.5 s before its first fetch with any broker) is "
        "the separate 'consumer start to first record' row. Each consume scenario runs "
        f"{info.get('client_bound_passes', 1)} times per round: it is client-bound (see 7) "
        "and noisy. With librdkafka's default queue limits "
        "the consumer stops fetching once 100,000 records are queued and then sleeps up to 1 s "
        "(librdkafka issue #2879), whatever the broker; with 100-byte records those stalls, not "
        "the broker, set the rate, so the tuned consumer may queue all it reads; the `_default` "
        "rows keep librdkafka's limits and so show those stalls, for both brokers.")
    out.append(
        "4. First produce: from the kernel's start time of the broker process (/proc/PID/stat; "
        "the JVM itself for Kafka, not its start script; 10 ms resolution) to the first "
        "acknowledged acks=1 record to a topic that does not exist yet, auto-created by the "
        "broker on both (auto.create.topics.enable=true, 1 partition). The client starts "
        "retrying before the broker starts (reconnect backoff 10-20 ms). Kafka's storage is "
        "formatted beforehand (not counted).")
    out.append(
        "5. Memory: VmRSS of the broker process (the JVM for Kafka, with Kafka's default "
        f"{info.get('kafka_heap', '-Xms1g -Xmx1g')} heap), idle 3 s after the first produce; "
        "peak sampled every 200 ms across the produce, consume and latency scenarios.")
    out.append(
        "6. Spread: (max - min) / median across runs; the noisier a row, the less its ratio "
        "means.")
    out.append(
        "7. Broker CPU: user + system seconds the broker process (all threads; the JVM for "
        "Kafka) spent during the scenario, from /proc/PID/stat, median over runs. The load "
        "generator shares the same cores, so where the client is the bottleneck (100-byte "
        "records; consume from page cache) this column, not the rate, shows the brokers' cost.")
    out.append(
        "8. The mock ceiling runs the tuned settings only, so `_default` and `_java` rows have "
        "none. MB are 10^6 bytes of record values in every row (the Java tools print MiB; "
        "bench/java_perf.py converts).")
    failures = info.get("failures", 0)
    if failures:
        out.append("")
        out.append(f"**{failures} scenario run(s) failed or timed out**; failed runs are left "
                   "out of the medians (see loadgen.log next to the raw results).")
    return "\n".join(out) + "\n"


def write_readme(path, table):
    text = open(path).read()
    begin, end = text.find(README_BEGIN), text.find(README_END)
    if begin < 0 or end < begin:
        sys.exit(f"report.py: {path} has no {README_BEGIN} ... {README_END} section")
    text = text[:begin + len(README_BEGIN)] + "\n" + table + text[end:]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def run_quiet(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def describe_machine(data_dir):
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = re.sub(r"\s+", " ", line.split(":", 1)[1]).strip()
                break
    cores = os.cpu_count()
    with open("/proc/meminfo") as f:
        mem_kib = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    ram = f"{mem_kib / 1024 / 1024:.0f} GiB RAM"
    kernel = f"Linux {platform.release()}"
    source, fstype = (run_quiet(["df", "--output=source,fstype", data_dir]).splitlines()[-1:] or
                      ["? ?"])[0].split()[:2]
    device = os.path.basename(source)
    parent = run_quiet(["lsblk", "-no", "PKNAME", source]) or device
    model = run_quiet(["lsblk", "-dno", "MODEL", f"/dev/{parent}"])
    size = run_quiet(["lsblk", "-dno", "SIZE", f"/dev/{parent}"])
    disk = ", ".join(p for p in [f"{source} ({fstype})", model or "no model reported", size] if p)
    virt = run_quiet(["systemd-detect-virt"])
    summary = (f"{cpu}, {cores} cores, {ram}, {kernel}, disk {disk}"
               f"{f', systemd-detect-virt: {virt}' if virt and virt != 'none' else ''}")
    return {"cpu": cpu, "cores": cores, "ram": ram, "kernel": kernel, "disk": disk,
            "summary": summary}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("raw", nargs="?")
    parser.add_argument("--readme", help="also write the table into this file between markers")
    parser.add_argument("--describe-machine", metavar="DIR")
    args = parser.parse_args()
    if args.describe_machine:
        print(json.dumps(describe_machine(args.describe_machine)))
        return
    if not args.raw:
        parser.error("RAW.jsonl is required")
    table = render(*load(args.raw))
    sys.stdout.write(table)
    if args.readme:
        write_readme(args.readme, table)


if __name__ == "__main__":
    main()
