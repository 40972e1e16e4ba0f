#!/usr/bin/env python3
"""The bench history: key rows per commit in bench/results/history.tsv, one line per row and run
(date, commit, load average, row, which way is better, Spool's median, Kafka's median,
Spool/Kafka), appended by the bench scripts and read back with `show`.

    history.py append --source NAME RAW.jsonl SCENARIO:METRIC[:higher|lower]...
        Medians over the runs in RAW.jsonl (bench/run.sh's or bench/replicated.sh's raw JSON
        lines, or bench/consume-defaults.sh's) of each SCENARIO's METRIC for Spool and Kafka,
        appended as the row NAME/SCENARIO/METRIC (default higher is better). load1 is the median
        of the runs' recorded 1-minute load averages (the machine is shared: read figures with it).
    history.py show [-n N] [--row SUBSTRING]
        The last N (default 5) entries of each row, oldest first. An entry whose Spool value is
        more than 20% worse than the previous entry of the same row is flagged REGRESSION: a
        report, never an exit status (the figures are noisy; the load average says how much).

    history.py commit
        The commit column for the tree as it is now; the scripts take it when they start
        (BENCH_COMMIT), so a checkout or an edit during a long run is not credited with its figures.

HISTORY (environment) picks another file, e.g. for a trial run.
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from datetime import datetime, timezone

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ["date", "commit", "load1", "row", "better", "spool", "kafka", "ratio"]
REGRESSION = 0.20


def history_path():
    return os.environ.get("HISTORY", os.path.join(ROOT, "bench", "results", "history.tsv"))


def commit():
    def git(*args):
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short=10", "HEAD") or "unknown"
    # A dirty tree is not that commit: say so rather than credit it with the figures.
    return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def median(values):
    return statistics.median(values) if values else None


def append(args):
    runs = defaultdict(list)
    loads = []
    for line in open(args.raw):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        who = r.get("cluster", r.get("broker"))
        if isinstance(r.get("load1"), (int, float)):
            loads.append(r["load1"])
        if who in ("spool", "kafka") and not r.get("failed"):
            runs[(who, r.get("scenario"))].append(r)
    load = median(loads)
    if load is None:
        load = float(open("/proc/loadavg").read().split()[0])
    date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    path = history_path()
    fresh = not os.path.exists(path) or os.path.getsize(path) == 0
    written, head = 0, os.environ.get("BENCH_COMMIT") or commit()
    with open(path, "a", newline="") as f:
        out = csv.writer(f, delimiter="\t", lineterminator="\n")
        if fresh:
            out.writerow(COLUMNS)
        for spec in args.rows:
            parts = spec.split(":")
            if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] not in ("higher", "lower")):
                sys.exit(f"history.py: bad row {spec!r} (SCENARIO:METRIC[:higher|lower])")
            scenario, metric = parts[0], parts[1]
            better = parts[2] if len(parts) == 3 else "higher"

            def value(who):
                return median([r[metric] for r in runs[(who, scenario)]
                               if isinstance(r.get(metric), (int, float))])

            spool, kafka = value("spool"), value("kafka")
            if spool is None and kafka is None:
                continue  # the scenario did not run (--only, --clusters): nothing to record
            ratio = spool / kafka if spool is not None and kafka else None
            out.writerow([date, head, f"{load:.2f}", f"{args.source}/{scenario}/{metric}", better,
                          fmt(spool), fmt(kafka), fmt(ratio)])
            written += 1
    print(f"history.py: {written} row(s) appended to {path}", file=sys.stderr)


def fmt(v):
    return "" if v is None else f"{v:.4g}"


def number(s):
    try:
        return float(s)
    except ValueError:
        return None


def show(args):
    path = history_path()
    if not os.path.exists(path):
        sys.exit(f"history.py: no history at {path} yet")
    by_row = defaultdict(list)
    with open(path, newline="") as f:
        for e in csv.DictReader(f, delimiter="\t"):
            if args.row is None or args.row in e["row"]:
                by_row[e["row"]].append(e)
    flagged = 0
    for row, entries in by_row.items():
        print(f"{row} ({entries[-1]['better']} is better)")
        shown = entries[-args.n:]
        first = len(entries) - len(shown)
        for i, e in enumerate(shown, start=first):
            note = ""
            now = number(e["spool"])
            before = number(entries[i - 1]["spool"]) if i > 0 else None
            if now is not None and before:
                change = (now - before) / before
                worse = -change if e["better"] == "higher" else change
                if worse > REGRESSION:
                    note = f"  REGRESSION {worse:.0%} vs {entries[i - 1]['commit']}"
                    flagged += 1
            print(f"  {e['date']}  {e['commit']:<16} load {e['load1']:>5}  spool {e['spool'] or 'n/a':>9}"
                  f"  kafka {e['kafka'] or 'n/a':>9}  ratio {e['ratio'] or 'n/a':>6}{note}")
    if flagged:
        print(f"\n{flagged} entr{'y' if flagged == 1 else 'ies'} more than {REGRESSION:.0%} worse than "
              "the previous one of its row (a report: compare the load averages before believing it)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("append")
    a.add_argument("--source", required=True)
    a.add_argument("raw")
    a.add_argument("rows", nargs="+")
    s = sub.add_parser("show")
    s.add_argument("-n", type=int, default=5)
    s.add_argument("--row")
    sub.add_parser("commit")
    args = p.parse_args()
    if args.cmd == "commit":
        print(commit())
    else:
        append(args) if args.cmd == "append" else show(args)


if __name__ == "__main__":
    main()
