#!/usr/bin/env python3
"""KIP-848 consumer groups (group.protocol=consumer, issue #35) through Apache Kafka's Java
client (Kip848Probe.java) and kafka-consumer-groups, against one broker: spool-broker, or with
--target kafka Apache Kafka itself (tests/fixtures/start-kafka.sh), the reference for every
check. Each check prints PASS or FAIL with what it saw; the exit status is the number of failures.

  join_leave        three consumers own six partitions exactly once; one leaves and its
                    partitions move to the other two
  commit_resume     600 records read and committed by two members at their member epochs; a
                    consumer started after they closed reads only the 300 written since
  regex             SubscriptionPattern (resolved by the broker): a topic created later that
                    matches is assigned too
  static_rejoin     a static member closes and returns within the session timeout: both
                    members keep their partitions
  cli_describe      kafka-consumer-groups --list --type and --describe (offsets, --members,
                    --state) with a consumer group and a classic group side by side: the headers equal
                    Kafka 4.x's and the group types are right
  librdkafka_consumer  librdkafka 2.12 (confluent-kafka's wheel; Debian's 2.0.2 has no KIP-848)
                    with group.protocol=consumer: two members split a topic, every record once,
                    one leaves (rdkafka_kip848.py)
  franz_go_consumer franz-go v1.22.3 with kgo.ServerSideBalancer: the classic-group checks of
                    tests/compat/groups/franz (split, leave, resume from commits) on KIP-848

    kip848_compat.py [--target spool|kafka] [--bin SPOOL_BROKER] --kafka-dir DIR
                     --python VENV_PYTHON [--only C,...]
    (VENV_PYTHON: the python of scripts/peers/fetch-python.sh's venv, with confluent-kafka;
     franz-go is built from tests/compat/groups/franz with go from the module cache)
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
from acl_compat import LOG4J, Broker  # noqa: E402  (the shared broker fixture wrapper)

PROBE_SRC = os.path.join(HERE, "Kip848Probe.java")
GROUPS_TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"

# Column headers kafka-consumer-groups 4.x prints for a consumer group (captured from Apache
# Kafka 4.1.1 and 4.4.0 brokers); Spool's must be the same.
EXPECTED_HEADERS = {
    "offsets": "GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID",
    "members": "GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS",
    "state": "GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS",
}


class Probe:
    def __init__(self, kafka_dir, work, bootstrap):
        self.cp = os.path.join(work, "classes") + os.pathsep + os.path.join(kafka_dir, "libs", "*")
        self.libs = os.path.join(kafka_dir, "libs", "*")
        self.work = work
        self.bootstrap = bootstrap
        os.makedirs(os.path.join(work, "classes"), exist_ok=True)
        proc = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d",
                               os.path.join(work, "classes"), "-cp", self.cp, PROBE_SRC],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"kip848_compat: javac failed:\n{proc.stdout}{proc.stderr}")

    def java(self, main, *args, cp=None):
        return ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx384m",
                "-Djava.net.preferIPv4Stack=true", f"-Dlog4j2.configurationFile={LOG4J}",
                "-cp", cp or self.cp, main, *map(str, args)]

    def run(self, sub, *args, timeout=300):
        proc = subprocess.run(self.java("Kip848Probe", sub, "--bootstrap", self.bootstrap, *args),
                              capture_output=True, text=True, timeout=timeout)
        out = (proc.stdout + proc.stderr[-3000:]).strip()
        if proc.returncode != 0:
            raise AssertionError(f"{sub} exited {proc.returncode}:\n{out}")
        return proc.stdout.strip()

    def tool(self, *args):
        proc = subprocess.run(self.java(GROUPS_TOOL, "--bootstrap-server", self.bootstrap, *args,
                                        cp=self.libs),
                              capture_output=True, text=True, timeout=180)
        if proc.returncode != 0:
            raise AssertionError(f"kafka-consumer-groups {' '.join(args)} exited "
                                 f"{proc.returncode}:\n{proc.stdout}{proc.stderr[-2000:]}")
        return proc.stdout


def last_lines(text, n=3):
    return " | ".join(text.splitlines()[-n:])


def check_join_leave(probe):
    return last_lines(probe.run("join-leave", "--group", "g-join", "--topic", "t-join"))


def check_commit_resume(probe):
    return last_lines(probe.run("commit-resume", "--group", "g-commit", "--topic", "t-commit"), 1)


def check_regex(probe):
    return last_lines(probe.run("regex", "--group", "g-regex", "--prefix", "re848"))


def check_static(probe):
    return last_lines(probe.run("static", "--group", "g-static", "--topic", "t-static"), 1)


def header(text):
    for line in text.splitlines():
        if line.startswith("GROUP "):
            return " ".join(line.split())
    return None


def hold(probe, group, topic, protocol="consumer"):
    args = ["hold", "--bootstrap", probe.bootstrap, "--group", group, "--topic", topic,
            "--n", "2", "--seconds", "90"]
    if protocol != "consumer":
        args += ["--protocol", protocol]
    log = open(os.path.join(probe.work, f"hold-{group}.log"), "w+")
    proc = subprocess.Popen(probe.java("Kip848Probe", *args), stdout=log,
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        log.seek(0)
        text = log.read()
        if "stable" in text.splitlines():
            return proc
        if proc.poll() is not None or "FAIL" in text:
            raise AssertionError(f"hold {group} failed:\n{text[-2000:]}")
        time.sleep(0.5)
    proc.kill()
    raise AssertionError(f"hold {group}: not stable in 120 s")


def check_cli(probe):
    holders = [hold(probe, "g-cli", "t-cli"), hold(probe, "g-cli-classic", "t-cli-classic",
                                                   "classic")]
    seen = []
    try:
        listing = probe.tool("--list", "--type")
        for group, kind in (("g-cli", "Consumer"), ("g-cli-classic", "Classic")):
            line = [l.split() for l in listing.splitlines() if l.split()[:1] == [group]]
            if not line or kind not in line[0]:
                raise AssertionError(f"--list --type does not show {group} as {kind}:\n{listing}")
            seen.append(" ".join(line[0]))
        for group in ("g-cli", "g-cli-classic"):
            for view, extra in (("offsets", []), ("members", ["--members"]),
                                ("state", ["--state"])):
                out = probe.tool("--describe", "--group", group, *extra)
                got = header(out)
                if got != EXPECTED_HEADERS[view]:
                    raise AssertionError(f"{group} --describe {view}: header {got!r}, Kafka's is "
                                         f"{EXPECTED_HEADERS[view]!r}:\n{out}")
                rows = [l for l in out.splitlines() if l.split()[:1] == [group]]
                if view == "offsets" and len(rows) != 4:
                    raise AssertionError(f"{group} --describe: {len(rows)} partition rows, "
                                         f"expected 4:\n{out}")
                if view == "members" and len(rows) != 2:
                    raise AssertionError(f"{group} --describe --members: {len(rows)} rows, "
                                         f"expected 2:\n{out}")
                if view == "state" and not any("Stable" in r for r in rows):
                    raise AssertionError(f"{group} --describe --state: not Stable:\n{out}")
        seen.append("offsets/members/state headers as Kafka's for both")
    finally:
        for h in holders:
            h.kill()
            h.wait()
    return "; ".join(seen)


def check_librdkafka(probe):
    if not probe.python:
        raise AssertionError("--python (a venv with confluent-kafka) was not given")
    proc = subprocess.run([probe.python, os.path.join(HERE, "rdkafka_kip848.py"), "--bootstrap",
                           probe.bootstrap], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"{proc.stdout}{proc.stderr[-2000:]}")
    return proc.stdout.strip().splitlines()[-1].split(": ", 1)[-1]


def check_franz(probe):
    if shutil.which("go") is None:
        raise AssertionError("go is missing (scripts/setup.sh --with-tests)")
    exe = os.path.join(probe.work, "franz-groups")
    build = subprocess.run(["go", "build", "-mod=readonly", "-trimpath", "-buildvcs=false", "-o",
                            exe, "."], cwd=os.path.join(HERE, "..", "groups", "franz"),
                           capture_output=True, text=True, timeout=600)
    if build.returncode != 0:
        raise AssertionError(f"go build failed:\n{build.stderr[-2000:]}")
    proc = subprocess.run([exe, "--bootstrap", probe.bootstrap, "--protocol", "consumer"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"{proc.stdout}{proc.stderr[-2000:]}")
    return proc.stdout.strip().splitlines()[-1]


CHECKS = [
    ("join_leave", check_join_leave),
    ("commit_resume", check_commit_resume),
    ("regex", check_regex),
    ("static_rejoin", check_static),
    ("cli_describe", check_cli),
    ("librdkafka_consumer", check_librdkafka),
    ("franz_go_consumer", check_franz),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["spool", "kafka"], default="spool")
    ap.add_argument("--bin")
    ap.add_argument("--kafka-dir", required=True)
    ap.add_argument("--python", help="python of a venv with confluent-kafka")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    if args.target == "spool" and not args.bin:
        ap.error("--bin is required for the spool target")
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            print(f"kip848_compat: {tool} is missing (scripts/setup.sh --with-tests)",
                  file=sys.stderr)
            return 2
    only = set(filter(None, args.only.split(",")))
    work = tempfile.mkdtemp(prefix=f"kip848-compat-{args.target}-")
    broker = Broker(args.target, args.bin, os.path.join(work, "data"))
    failures = 0
    started = time.monotonic()
    try:
        broker.start("auto.create.topics.enable=false")
        probe = Probe(args.kafka_dir, work, broker.bootstrap)
        probe.python = args.python
        for name, check in CHECKS:
            if only and name not in only:
                continue
            t0 = time.monotonic()
            try:
                print(f"PASS {name}: {check(probe)} ({time.monotonic() - t0:.0f} s)", flush=True)
            except (AssertionError, subprocess.TimeoutExpired) as e:
                failures += 1
                print(f"FAIL {name}: {e} ({time.monotonic() - t0:.0f} s)", flush=True)
    finally:
        try:
            broker.stop()
        except AssertionError as e:
            print(f"kip848_compat: {e}", file=sys.stderr)
            failures += 1
    print(f"kip848_compat {args.target}: {failures} failed in {time.monotonic() - started:.0f} s")
    if failures == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"kip848_compat: logs kept in {work}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
