#!/usr/bin/env python3
"""Kafka's kafka-share-groups tool (ShareGroupCommand) against one broker: spool-broker, or with
--target kafka Apache Kafka itself (tests/fixtures/start-kafka.sh), the reference. The share-group
admin APIs behind it: ListGroups (type share), ShareGroupDescribe, DescribeShareGroupOffsets,
AlterShareGroupOffsets, DeleteShareGroupOffsets, DeleteGroups. Every step checks real values:

  consume       kafka-console-share-consumer reads all 20 records of topic sq (2 partitions x 10)
  list          --list shows the group
  describe      --describe --state: the group is Empty once the consumer left
  offsets       --describe --offsets: both partitions with lag 0 (all accepted)
  members       --describe --members while a consumer runs: one member assigned sq:0 and sq:1
  busy          --reset-offsets and --delete refuse a group with a member
  earliest      --reset-offsets --to-earliest --execute: start offsets 0, lag 10
  latest        5 more records, --reset-offsets --to-latest --execute: start offsets 15, lag 0,
                then 3 more records: lag 3 on the partition that got them
  delete_offsets  --delete-offsets --topic sq: the group has no offsets left for sq;
                --delete-offsets of a topic that does not exist reports it per topic
  delete        --delete: the group is gone from --list
  new_group     --reset-offsets --to-earliest --execute on a group id nobody used creates the
                group (Kafka 4.4 does): listed, start offsets 0 with lags 15 and 18; --delete

    share_tool.py [--target spool|kafka] [--bin SPOOL_BROKER] --kafka-dir DIR
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "acls"))
from acl_compat import LOG4J, Broker, kcat  # noqa: E402  (the shared broker fixture wrapper)

TOOL = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
CONSOLE = "org.apache.kafka.tools.consumer.ConsoleShareConsumer"
TOPICS = "org.apache.kafka.tools.TopicCommand"
CONFIGS = "org.apache.kafka.tools.ConfigCommand"
GROUP = "share-tool"
TOPIC = "sq"
JAVA = ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx256m",
        "-Djava.net.preferIPv4Stack=true", f"-Dlog4j2.configurationFile={LOG4J}"]


class Tool:
    def __init__(self, broker, kafka_dir):
        self.broker = broker
        self.cp = os.path.join(kafka_dir, "libs", "*")

    def run(self, main_class, *args, check=True, timeout=120):
        proc = subprocess.run(JAVA + ["-cp", self.cp, main_class, "--bootstrap-server",
                                      self.broker.bootstrap, *args],
                              capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"{main_class} {' '.join(args)} exited {proc.returncode}:\n"
                                 f"{proc.stdout}{proc.stderr}")
        return proc

    def share(self, *args, check=True):
        return self.run(TOOL, *args, check=check)

    def consumer(self, *args):
        return JAVA + ["-cp", self.cp, CONSOLE, "--bootstrap-server", self.broker.bootstrap,
                       "--topic", TOPIC, "--group", GROUP, *args]


def table(text):
    """The rows of the tool's table output as dicts keyed by its header (blank lines split)."""
    rows, header = [], None
    for line in text.splitlines():
        cols = line.split()
        if not cols:
            header = None
            continue
        if header is None:
            if "GROUP" in cols:
                header = cols
            continue
        rows.append(dict(zip(header, cols)))
    return rows


def offsets(tool):
    """{partition: (start offset, lag)} of the group's sq partitions, from --describe --offsets."""
    out = tool.share("--describe", "--offsets", "--group", GROUP).stdout
    got = {}
    for r in table(out):
        if r.get("TOPIC") == TOPIC:
            got[int(r["PARTITION"])] = (r.get("START-OFFSET"), r.get("LAG"))
    return got, out


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def produce(bootstrap, partition, count, first=0):
    payload = "".join(f"r{first + i}\n" for i in range(count))
    proc = kcat(bootstrap, "-P", "-t", TOPIC, "-p", str(partition), "-X", "acks=all",
                stdin=payload)
    expect(proc.returncode == 0, f"kcat produce failed: {proc.stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["spool", "kafka"], default="spool")
    ap.add_argument("--bin")
    ap.add_argument("--kafka-dir", required=True)
    args = ap.parse_args()
    if args.target == "spool" and not args.bin:
        ap.error("--bin is required for the spool target")
    work = tempfile.mkdtemp(prefix=f"share-tool-{args.target}-")
    broker = Broker(args.target, args.bin, os.path.join(work, "data"))
    started = time.monotonic()
    failures = 0
    overrides = ["auto.create.topics.enable=false"]
    background = None
    try:
        broker.start(*overrides)
        tool = Tool(broker, args.kafka_dir)
        tool.run(TOPICS, "--create", "--topic", TOPIC, "--partitions", "2",
                 "--replication-factor", "1")
        # share.auto.offset.reset is a GROUP config (the broker default is latest).
        tool.run(CONFIGS, "--alter", "--entity-type", "groups", "--entity-name", GROUP,
                 "--add-config", "share.auto.offset.reset=earliest")
        for p in (0, 1):
            produce(broker.bootstrap, p, 10)

        def step(name, fn):
            nonlocal failures
            try:
                fn()
                print(f"PASS {name}")
            except AssertionError as e:
                failures += 1
                print(f"FAIL {name}: {e}")

        def consume():
            proc = subprocess.run(tool.consumer("--max-messages", "20", "--timeout-ms", "30000"),
                                  capture_output=True, text=True, timeout=120)
            records = [line for line in proc.stdout.splitlines() if line.startswith("r")]
            expect(len(records) == 20, f"consumed {len(records)} of 20:\n{proc.stderr[-2000:]}")

        def listed():
            out = tool.share("--list").stdout.split()
            expect(GROUP in out, f"--list: {out}")

        def described():
            out = tool.share("--describe", "--state", "--group", GROUP).stdout
            rows = table(out)
            expect(rows and rows[0].get("STATE") == "Empty", f"--describe --state:\n{out}")

        def all_consumed():
            # Every record accepted: no lag. The start offset may stay at 0 with the records
            # acknowledged in flight (Kafka 4.4.0 moves it later) or move past them (Spool): both
            # are Kafka's lag of 0 (latest - start - finished in flight).
            got, out = offsets(tool)
            expect(sorted(got) == [0, 1] and all(lag == "0" and start in ("0", "10")
                                                 for start, lag in got.values()),
                   f"--describe --offsets:\n{out}")

        def members():
            nonlocal background
            background = subprocess.Popen(tool.consumer(), stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 40
            out = ""
            while time.monotonic() < deadline:
                out = tool.share("--describe", "--members", "--group", GROUP).stdout
                rows = [r for r in table(out) if r.get("GROUP") == GROUP]
                if len(rows) == 1 and f"{TOPIC}:0,1" in out:
                    return
                time.sleep(1)
            raise AssertionError(f"--describe --members never showed the member:\n{out}")

        def busy():
            reset = tool.share("--reset-offsets", "--to-earliest", "--execute", "--topic", TOPIC,
                               "--group", GROUP, check=False)
            text = reset.stdout + reset.stderr
            expect(re.search(r"not empty|inactive|NonEmpty|GroupNotEmpty", text, re.I),
                   f"reset with a member:\n{text}")
            delete = tool.share("--delete", "--group", GROUP, check=False)
            text = delete.stdout + delete.stderr
            expect(re.search(r"not empty|NonEmpty|GroupNotEmpty", text, re.I),
                   f"delete with a member:\n{text}")
            background.terminate()
            background.wait(timeout=60)
            # The member leaves on close; the group is Empty again.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                rows = table(tool.share("--describe", "--state", "--group", GROUP).stdout)
                if rows and rows[0].get("STATE") == "Empty":
                    return
                time.sleep(1)
            raise AssertionError("the group never became Empty after its member closed")

        def earliest():
            tool.share("--reset-offsets", "--to-earliest", "--execute", "--topic", TOPIC,
                       "--group", GROUP)
            got, out = offsets(tool)
            expect(got == {0: ("0", "10"), 1: ("0", "10")}, f"after --to-earliest:\n{out}")

        def latest():
            produce(broker.bootstrap, 0, 5, first=10)
            produce(broker.bootstrap, 1, 5, first=10)
            tool.share("--reset-offsets", "--to-latest", "--execute", "--all-topics",
                       "--group", GROUP)
            got, out = offsets(tool)
            expect(got == {0: ("15", "0"), 1: ("15", "0")}, f"after --to-latest:\n{out}")
            produce(broker.bootstrap, 1, 3, first=15)
            got, out = offsets(tool)
            expect(got == {0: ("15", "0"), 1: ("15", "3")}, f"3 records later:\n{out}")

        def delete_offsets():
            tool.share("--delete-offsets", "--topic", TOPIC, "--group", GROUP)
            got, out = offsets(tool)
            expect(all(v[0] in (None, "-") for v in got.values()),
                   f"offsets left after --delete-offsets:\n{out}")
            missing = tool.share("--delete-offsets", "--topic", "nope", "--group", GROUP).stdout
            expect(re.search(r"nope\s+Error: This server does not host this topic-partition",
                             missing), f"--delete-offsets of a missing topic:\n{missing}")

        def deleted():
            tool.share("--delete", "--group", GROUP)
            out = tool.share("--list").stdout.split()
            expect(GROUP not in out, f"--list after --delete: {out}")

        def new_group():
            fresh = GROUP + "-new"
            tool.share("--reset-offsets", "--to-earliest", "--execute", "--topic", TOPIC,
                       "--group", fresh)
            listed_now = tool.share("--list").stdout.split()
            expect(fresh in listed_now, f"--list after resetting a new group: {listed_now}")
            out = tool.share("--describe", "--offsets", "--group", fresh).stdout
            got = {int(r["PARTITION"]): (r.get("START-OFFSET"), r.get("LAG"))
                   for r in table(out) if r.get("TOPIC") == TOPIC}
            expect(got == {0: ("0", "15"), 1: ("0", "18")}, f"the new group's offsets:\n{out}")
            tool.share("--delete", "--group", fresh)
            expect(fresh not in tool.share("--list").stdout.split(), "the new group stayed")

        for name, fn in (("consume", consume), ("list", listed), ("describe", described),
                         ("offsets", all_consumed), ("members", members), ("busy", busy),
                         ("earliest", earliest), ("latest", latest),
                         ("delete_offsets", delete_offsets), ("delete", deleted),
                         ("new_group", new_group)):
            step(name, fn)
    except AssertionError as e:
        failures += 1
        print(f"FAIL setup: {e}")
    finally:
        if background is not None and background.poll() is None:
            background.kill()
            background.wait()
        try:
            broker.stop()
        except AssertionError as e:
            print(f"share_tool: {e}", file=sys.stderr)
            failures += 1
    print(f"share_tool {args.target}: {failures} failed in {time.monotonic() - started:.0f} s")
    if failures == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"share_tool: logs kept in {work}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
