#!/usr/bin/env python3
"""KIP-932 share groups (issue #35) through Apache Kafka's Java KafkaShareConsumer
(ShareProbe.java), against one broker: spool-broker, or with --target kafka Apache Kafka itself
(tests/fixtures/start-kafka.sh), the reference for every check. The probe prints PASS or FAIL per
check; the exit status is the number of failures.

  exactly_once       three members share 300 records of 3 partitions with explicit ACCEPTs:
                     each accepted once overall, none held by two members at once
  release_redeliver  RELEASE'd records come back with delivery count 2
  reject_archives    REJECT'ed records never come back; later records still do
  lock_timeout       records a member holds without acknowledging go to another member after
                     group.share.record.lock.duration.ms (3000 here), delivery count 2
  delivery_limit     a record released every time is delivered group.share.delivery.count.limit
                     (3 here) times, then archived
  admin_list_describe  Admin.listGroups(forShareGroups) and describeShareGroups: a live
                     member owns the topic's 3 partitions, the group is Stable
  growing_group      one member on a 12,000-record backlog of 6 partitions (implicit
                     acknowledgement), three more join while it consumes: no record reaches the
                     application twice, no acknowledgement is refused, every member gets some,
                     and listShareGroupOffsets shows every partition accepted (lag 0)

On Spool, after a full probe run, the broker's share-group metrics (docs/metrics.md "Broker:
share groups") are checked against what the probe did: every count the probe determines
(releases, rejects, redeliveries, the delivery-limit archive, accepted records, lag 0) exactly,
lock expiries at least one.

    share_compat.py [--target spool|kafka] [--bin SPOOL_BROKER] --kafka-dir DIR [--only C,...]
"""

import argparse
import os
import re
import socket
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "acls"))
from acl_compat import LOG4J, Broker  # noqa: E402  (the shared broker fixture wrapper)

PROBE_SRC = os.path.join(HERE, "ShareProbe.java")

# The same share settings on both targets. group.share.min.record.lock.duration.ms bounds the
# groups' share.record.lock.duration.ms (15 s by default). share.auto.offset.reset=earliest is a
# GROUP config on both (the probe sets it per group).
OVERRIDES = [
    "auto.create.topics.enable=false",
    "group.share.record.lock.duration.ms=3000",
    "group.share.min.record.lock.duration.ms=1000",
    "group.share.delivery.count.limit=3",
]
SPOOL_ONLY = []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port):
    """{(family, frozenset(labels)): value} of the spool_share_group_* samples on /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        m = re.match(r'^(spool_share_group_[a-z_]+)\{([^}]*)\} (\S+)$', line)
        if m:
            labels = frozenset(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


def check_metrics(port):
    """The share-group metrics against what ShareProbe did; returns the failures."""
    samples = scrape(port)

    def total(family, group, **extra):
        want = {("group", group), *extra.items()}
        return sum(v for (f, labels), v in samples.items() if f == family and want <= labels)

    # (what, family, group, extra labels, expected, exact)
    checks = [
        ("accepted by three members", "spool_share_group_acknowledgements_total", "g-share-eo",
         {"type": "accept"}, 300, True),
        ("lag once all is accepted", "spool_share_group_lag", "g-share-eo", {}, 0, True),
        ("released once each", "spool_share_group_acknowledgements_total", "g-share-rel",
         {"type": "release"}, 10, True),
        ("redelivered after release", "spool_share_group_redeliveries_total", "g-share-rel", {},
         10, True),
        ("delivered twice each", "spool_share_group_deliveries_total", "g-share-rel", {}, 20, True),
        ("start offset past the 10 accepted", "spool_share_group_start_offset", "g-share-rel",
         {}, 10, True),
        ("rejected", "spool_share_group_records_archived_total", "g-share-rej",
         {"reason": "rejected"}, 5, True),
        ("rejects never redelivered", "spool_share_group_redeliveries_total", "g-share-rej", {},
         0, True),
        ("lock expiries of the holder's records", "spool_share_group_lock_expiries_total",
         "g-share-lock", {}, 1, False),
        ("archived at the delivery limit", "spool_share_group_records_archived_total",
         "g-share-lim", {"reason": "delivery_limit"}, 1, True),
        ("deliveries up to the limit (3)", "spool_share_group_deliveries_total", "g-share-lim",
         {}, 3, True),
        ("accepted while the group grew", "spool_share_group_acknowledgements_total",
         "g-share-grow", {"type": "accept"}, 12000, True),
        ("lag once the grown group is done", "spool_share_group_lag", "g-share-grow", {}, 0,
         True),
    ]
    failures = 0
    for what, family, group, extra, want, exact in checks:
        got = total(family, group, **extra)
        ok = got == want if exact else got >= want
        print(f"{'PASS' if ok else 'FAIL'} metrics {group} {what}: {family} = {got:g} "
              f"({'' if exact else 'at least '}{want})")
        failures += 0 if ok else 1
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["spool", "kafka"], default="spool")
    ap.add_argument("--bin")
    ap.add_argument("--kafka-dir", required=True)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    if args.target == "spool" and not args.bin:
        ap.error("--bin is required for the spool target")
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            print(f"share_compat: {tool} is missing (scripts/setup.sh --with-tests)",
                  file=sys.stderr)
            return 2
    work = tempfile.mkdtemp(prefix=f"share-compat-{args.target}-")
    classes = os.path.join(work, "classes")
    os.makedirs(classes)
    cp = classes + os.pathsep + os.path.join(args.kafka_dir, "libs", "*")
    proc = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", classes, "-cp", cp,
                           PROBE_SRC], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        print(f"share_compat: javac failed:\n{proc.stdout}{proc.stderr}", file=sys.stderr)
        return 2
    broker = Broker(args.target, args.bin, os.path.join(work, "data"))
    started = time.monotonic()
    failures = 0
    http_port = free_port()
    spool_only = SPOOL_ONLY + [f"http.listener=127.0.0.1:{http_port}"]
    try:
        broker.start(*(OVERRIDES + (spool_only if args.target == "spool" else [])))
        cmd = ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx384m",
               "-Djava.net.preferIPv4Stack=true", f"-Dlog4j2.configurationFile={LOG4J}",
               "-cp", cp, "ShareProbe", "--bootstrap", broker.bootstrap]
        if args.only:
            cmd += ["--only", args.only]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=400)
        print(proc.stdout, end="")
        failures = proc.returncode
        if failures != 0:
            print(proc.stderr[-4000:], file=sys.stderr)
        passes = proc.stdout.count("PASS ")
        if passes == 0 and failures == 0:
            print("share_compat: the probe ran no check", file=sys.stderr)
            failures = 1
        if args.target == "spool" and not args.only:
            failures += check_metrics(http_port)
    finally:
        try:
            broker.stop()
        except AssertionError as e:
            print(f"share_compat: {e}", file=sys.stderr)
            failures += 1
    print(f"share_compat {args.target}: {failures} failed in {time.monotonic() - started:.0f} s")
    if failures == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"share_compat: logs kept in {work}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
