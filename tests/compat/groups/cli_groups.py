#!/usr/bin/env python3
"""Apache Kafka's kafka-consumer-groups tool (ConsumerGroupCommand 4.1.1) against a real broker.

Each tool call is its own JVM started the way bin/kafka-consumer-groups.sh starts it (the tool's
main class on Kafka's classpath). Records are produced with kcat into chosen partitions, with the
payload naming its partition and offset, and consumed in the group with kcat -G, which commits
exactly what it consumed. Checks, each printed as PASS/FAIL:

  describe_reports_lag        --describe: CURRENT-OFFSET is what the group consumed,
                              LOG-END-OFFSET what was produced, LAG the difference
  reset_refused_while_active  --reset-offsets on a group with a live member fails, offsets stay
  reset_to_earliest           dry run changes nothing; --execute rewinds to 0 and the group
                              re-reads every record
  reset_to_offset             --to-offset N: the group resumes at N in every partition
  reset_shift_by              --shift-by -N moves each committed offset back by N
  reset_to_datetime           --to-datetime T: the first offset with a timestamp >= T
  delete_group                --delete removes the group: gone from --list and --describe

    cli_groups.py --bootstrap HOST:PORT --kafka-dir DIR   (DIR: the peer with libs/*.jar)
"""

import argparse
import datetime
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LOG4J = os.path.join(HERE, "..", "java", "log4j2.properties")
GROUPS_TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
TOPICS_TOOL = "org.apache.kafka.tools.TopicCommand"
# Records per partition before the --to-datetime mark (A), after it (B), and produced after the
# group committed (C): different per partition so that a column mixed up between partitions shows.
PHASE_A = [5, 10, 15]
PHASE_B = [6, 4, 8]
PHASE_C = [2, 3, 4]
PARTITIONS = len(PHASE_A)


class Tools:
    def __init__(self, bootstrap, kafka_dir):
        self.bootstrap = bootstrap
        self.classpath = os.path.join(kafka_dir, "libs", "*")

    def run(self, main_class, *args, expect_ok=True):
        # C1 only and a small heap: a short-lived JVM per call, as in run-compat.sh.
        cmd = ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx256m",
               f"-Dlog4j2.configurationFile={LOG4J}", "-cp", self.classpath, main_class,
               "--bootstrap-server", self.bootstrap, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if expect_ok and proc.returncode != 0:
            raise AssertionError(f"{' '.join(args)} exited {proc.returncode}:\n{proc.stdout}{proc.stderr}")
        return proc

    def groups(self, *args, expect_ok=True):
        return self.run(GROUPS_TOOL, *args, expect_ok=expect_ok)


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def table(text, first_column="GROUP"):
    """Rows of the whitespace-aligned tables the tool prints, as dicts keyed by the header."""
    rows, header = [], None
    for line in text.splitlines():
        cols = line.split()
        if not cols:
            continue
        if cols[0] == first_column:
            header = cols
        elif header and len(cols) == len(header):
            rows.append(dict(zip(header, cols)))
    return rows


def by_partition(rows, topic):
    return {int(r["PARTITION"]): r for r in rows if r["TOPIC"] == topic}


def produce(bootstrap, topic, counts, start_offsets):
    """counts[p] records into partition p; the payload is 'p<partition>-o<offset>'."""
    for p, n in enumerate(counts):
        lines = "".join(f"p{p}-o{start_offsets[p] + i}\n" for i in range(n))
        proc = subprocess.run(["kcat", "-b", bootstrap, "-P", "-t", topic, "-p", str(p),
                               "-X", "acks=all", "-X", "topic.message.timeout.ms=30000"],
                              input=lines, capture_output=True, text=True, timeout=60)
        expect(proc.returncode == 0, f"kcat -P into partition {p}: {proc.stderr}")


def consume(bootstrap, group, topic, count):
    """Consumes exactly count records in the group with kcat -G and commits them on close."""
    proc = subprocess.run(
        ["kcat", "-b", bootstrap, "-G", group, topic, "-c", str(count), "-f", "%s\n", "-u",
         "-X", "auto.offset.reset=earliest", "-X", "session.timeout.ms=6000",
         "-X", "heartbeat.interval.ms=500"],
        capture_output=True, text=True, timeout=90)
    expect(proc.returncode == 0, f"kcat -G exited {proc.returncode}: {proc.stderr[-2000:]}")
    return proc.stdout.split()


def payloads(first_offsets, end_offsets):
    return {f"p{p}-o{o}" for p in range(PARTITIONS) for o in range(first_offsets[p], end_offsets[p])}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--kafka-dir", required=True)
    args = parser.parse_args()
    tools = Tools(args.bootstrap, args.kafka_dir)
    stamp = f"{int(time.time() * 1000):x}"
    topic, group = f"cli-groups-{stamp}", f"cli-group-{stamp}"
    passed = failed = 0

    def run(name, fn):
        nonlocal passed, failed
        started = time.monotonic()
        try:
            fn()
            print(f"PASS {name} ({time.monotonic() - started:.1f}s)", flush=True)
            passed += 1
        except Exception as e:  # noqa: BLE001 - report and continue with the next check
            print(f"FAIL {name}: {e}", flush=True)
            failed += 1

    def describe():
        out = tools.groups("--describe", "--group", group).stdout
        rows = by_partition(table(out), topic)
        expect(sorted(rows) == list(range(PARTITIONS)), f"--describe partition rows:\n{out}")
        return rows

    def expect_committed(expected, log_end, what):
        rows = describe()
        for p in range(PARTITIONS):
            r = rows[p]
            got = (r["CURRENT-OFFSET"], r["LOG-END-OFFSET"], r["LAG"])
            want = (str(expected[p]), str(log_end[p]), str(log_end[p] - expected[p]))
            expect(got == want, f"{what}: partition {p} CURRENT/LOG-END/LAG {got}, expected {want}")

    def reset(*how, execute=True):
        extra = ["--execute"] if execute else ["--dry-run"]
        out = tools.groups("--reset-offsets", "--group", group, "--topic", topic, *how, *extra).stdout
        rows = by_partition(table(out), topic)
        expect(sorted(rows) == list(range(PARTITIONS)), f"--reset-offsets {how} printed:\n{out}")
        return {p: int(r["NEW-OFFSET"]) for p, r in rows.items()}

    tools.run(TOPICS_TOOL, "--create", "--topic", topic, "--partitions", str(PARTITIONS),
              "--replication-factor", "1")
    zeros = [0] * PARTITIONS
    mark = [0] * PARTITIONS
    log_end = [0] * PARTITIONS

    produce(args.bootstrap, topic, PHASE_A, zeros)
    mark = list(PHASE_A)
    time.sleep(1.5)
    # The --to-datetime mark: after every phase A record's timestamp, before every phase B one.
    mark_time = datetime.datetime.now(datetime.timezone.utc)
    time.sleep(1.5)
    produce(args.bootstrap, topic, PHASE_B, mark)
    consumed = [a + b for a, b in zip(PHASE_A, PHASE_B)]
    got = consume(args.bootstrap, group, topic, sum(consumed))
    expect(sorted(got) == sorted(payloads(zeros, consumed)), f"first consume read {len(got)} records")
    produce(args.bootstrap, topic, PHASE_C, consumed)
    log_end = [a + c for a, c in zip(consumed, PHASE_C)]

    run("describe_reports_lag", lambda: expect_committed(consumed, log_end, "after consuming"))

    def refused_while_active():
        member = subprocess.Popen(
            ["kcat", "-b", args.bootstrap, "-G", group, topic, "-q", "-X", "session.timeout.ms=6000",
             "-X", "heartbeat.interval.ms=500", "-X", "enable.auto.commit=false",
             # kcat would otherwise commit what it read when it closes.
             "-X", "enable.auto.offset.store=false"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while True:
                out = tools.groups("--describe", "--group", group, "--state").stdout
                states = [r.get("STATE") for r in table(out) if r.get("GROUP") == group]
                if states == ["Stable"]:
                    break
                expect(time.monotonic() < deadline, f"group never became Stable:\n{out}")
                time.sleep(1)
            proc = tools.groups("--reset-offsets", "--group", group, "--topic", topic,
                                "--to-earliest", "--execute", expect_ok=False)
            text = proc.stdout + proc.stderr
            expect("inactive" in text, f"reset of an active group was not refused:\n{text}")
        finally:
            member.terminate()
            member.wait(timeout=30)
        # The member left (LeaveGroup on close): offsets are unchanged and the group is Empty.
        deadline = time.monotonic() + 30
        while "Empty" not in tools.groups("--describe", "--group", group, "--state").stdout:
            expect(time.monotonic() < deadline, "group did not become Empty after its member left")
            time.sleep(1)
        expect_committed(consumed, log_end, "after the refused reset")

    run("reset_refused_while_active", refused_while_active)

    def to_earliest():
        planned = reset("--to-earliest", execute=False)
        expect(planned == dict.fromkeys(range(PARTITIONS), 0), f"dry run planned {planned}")
        expect_committed(consumed, log_end, "after a dry run")
        done = reset("--to-earliest")
        expect(done == dict.fromkeys(range(PARTITIONS), 0), f"--execute printed {done}")
        expect_committed(zeros, log_end, "after --to-earliest")
        got = consume(args.bootstrap, group, topic, sum(log_end))
        expect(sorted(got) == sorted(payloads(zeros, log_end)),
               f"re-read after --to-earliest: {len(got)} records, expected {sum(log_end)}")
        expect_committed(log_end, log_end, "after re-reading everything")

    run("reset_to_earliest", to_earliest)

    def to_offset():
        done = reset("--to-offset", "4")
        expect(done == dict.fromkeys(range(PARTITIONS), 4), f"--to-offset 4 printed {done}")
        expect_committed([4] * PARTITIONS, log_end, "after --to-offset 4")
        got = consume(args.bootstrap, group, topic, sum(e - 4 for e in log_end))
        expect(sorted(got) == sorted(payloads([4] * PARTITIONS, log_end)),
               f"read after --to-offset 4: {sorted(got)}")
        expect_committed(log_end, log_end, "after consuming from offset 4")

    run("reset_to_offset", to_offset)

    def shift_by():
        expected = [e - 3 for e in log_end]
        done = reset("--shift-by", "-3")
        expect(done == dict(enumerate(expected)), f"--shift-by -3 printed {done}, expected {expected}")
        expect_committed(expected, log_end, "after --shift-by -3")

    run("reset_shift_by", shift_by)

    def to_datetime():
        stamp_text = mark_time.strftime("%Y-%m-%dT%H:%M:%S.") + f"{mark_time.microsecond // 1000:03d}Z"
        done = reset("--to-datetime", stamp_text)
        expect(done == dict(enumerate(mark)), f"--to-datetime {stamp_text} printed {done}, expected {mark}")
        expect_committed(mark, log_end, "after --to-datetime")
        got = consume(args.bootstrap, group, topic, sum(e - m for e, m in zip(log_end, mark)))
        expect(sorted(got) == sorted(payloads(mark, log_end)), f"read after --to-datetime: {sorted(got)}")

    run("reset_to_datetime", to_datetime)

    def delete():
        proc = tools.groups("--delete", "--group", group)
        expect("successful" in proc.stdout, f"--delete printed:\n{proc.stdout}{proc.stderr}")
        listed = tools.groups("--list").stdout.split()
        expect(group not in listed, f"--list still shows {group}: {listed}")
        proc = tools.groups("--describe", "--group", group, expect_ok=False)
        text = proc.stdout + proc.stderr
        # DescribeGroups v0-v5 report a missing group as Dead ("does not exist"); v6 (KIP-1043,
        # Kafka 4.x) answers GROUP_ID_NOT_FOUND ("not found").
        expect(proc.returncode != 0 or "does not exist" in text,
               f"--describe of the deleted group succeeded:\n{text}")
        expect("does not exist" in text or "GroupIdNotFoundException" in text,
               f"--describe of the deleted group printed:\n{text}")

    run("delete_group", delete)

    tools.run(TOPICS_TOOL, "--delete", "--topic", topic, expect_ok=False)
    print(f"cli groups: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # noqa: BLE001 - report and fail
        print(f"FAIL cli groups: {e}")
        sys.exit(1)
