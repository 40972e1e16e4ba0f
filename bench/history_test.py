#!/usr/bin/env python3
"""bench/history.py against raw files shaped like the bench scripts' (run.sh's "broker" key,
replicated.sh's "cluster" key): medians, the row names, and the regression flag both ways."""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HISTORY = os.path.join(HERE, "history.py")


def run(env, *args):
    p = subprocess.run([sys.executable, HISTORY, *args], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"history.py {' '.join(args)} failed ({p.returncode}): {p.stderr}")
    return p.stdout


def raw(path, key, rows):
    with open(path, "w") as f:
        for who, scenario, values in rows:
            for i, v in enumerate(values):
                f.write(json.dumps({key: who, "round": i + 1, "scenario": scenario, "load1": 2.0 + i,
                                    **v}) + "\n")
        f.write(json.dumps({key: "machine", "round": 0, "scenario": "run_info"}) + "\n")


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")
    print(f"ok: {what}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, HISTORY=os.path.join(tmp, "history.tsv"))
        first = os.path.join(tmp, "first.jsonl")
        raw(first, "cluster", [
            ("spool", "read", [{"mb_per_s": 100}, {"mb_per_s": 300}, {"mb_per_s": 200}]),
            ("kafka", "read", [{"mb_per_s": 50}, {"mb_per_s": 150}, {"failed": 1, "mb_per_s": 999}]),
            ("spool", "lat", [{"p99_us": 1000}]),
            ("kafka", "lat", [{"p99_us": 2000}]),
        ])
        run(env, "append", "--source", "t", first, "read:mb_per_s", "lat:p99_us:lower", "absent:x")
        lines = open(env["HISTORY"]).read().splitlines()
        check(lines[0].split("\t")[:4] == ["date", "commit", "load1", "row"], "a header first")
        check(len(lines) == 3, "one line per row that ran (a scenario that did not run is skipped)")
        read = lines[1].split("\t")
        check(read[3] == "t/read/mb_per_s" and read[4] == "higher", "row name and direction")
        check(read[5:] == ["200", "100", "2"], "medians of Spool and Kafka, failed runs left out")
        check(read[2] == "2.50", "load1 is the median of the runs' load averages")

        second = os.path.join(tmp, "second.jsonl")
        raw(second, "broker", [
            ("spool", "read", [{"mb_per_s": 150}]),  # 25% lower: worse
            ("kafka", "read", [{"mb_per_s": 100}]),
            ("spool", "lat", [{"p99_us": 1100}]),  # 10% higher: within the noise allowed
        ])
        run(env, "append", "--source", "t", second, "read:mb_per_s", "lat:p99_us:lower")
        third = os.path.join(tmp, "third.jsonl")
        raw(third, "broker", [("spool", "lat", [{"p99_us": 1500}])])  # 36% higher: worse
        run(env, "append", "--source", "t", third, "lat:p99_us:lower")
        out = run(env, "show", "-n", "2")
        print(out)
        blocks, row = {}, None
        for line in out.splitlines():
            if line and not line.startswith(" "):
                row = line.split(" ")[0]
            blocks[row] = blocks.get(row, "") + line + "\n"
        read_block, lat_block = blocks["t/read/mb_per_s"], blocks["t/lat/p99_us"]
        check("REGRESSION 25%" in read_block, "a 25% lower rate is flagged")
        check(lat_block.count("REGRESSION") == 1 and "REGRESSION 36%" in lat_block,
              "a 36% higher latency is flagged, a 10% one is not")
        check(len([l for l in lat_block.splitlines() if "spool" in l]) == 2, "-n 2 shows the last two")
        check("2 entries more than 20% worse" in out, "the count of flagged entries")


if __name__ == "__main__":
    main()
