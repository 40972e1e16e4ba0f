#!/usr/bin/env python3
"""KIP-932 share groups across a kill -9 of a partition's leader and then of the group's
coordinator (issue #35), with Apache Kafka's Java KafkaShareConsumer (ShareFailoverProbe.java): three members of one share group consume a
topic of 3 partitions with replication factor 3 on a Spool cluster of three brokers on one etcd
(mm2_compat.SpoolCluster) while a producer writes it with acks=all. Once a quarter of the records
are acknowledged the probe names partition 0's leader; this script kills it with SIGKILL, restarts
it on its data directory, and tells the probe. The probe then names the share group's
coordinator, which goes the same way while the producer still writes. Every produced record must be processed at least
once, none lost, and no record whose ACCEPT commitSync reported done delivered again. Prints the
counts (produced, processed, redelivered_after_ack, lost); the exit status is the failures.

    share_failover.py --bin SPOOL_BROKER --kafka-dir DIR [--records N]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mm2"))
from mm2_compat import SpoolCluster  # noqa: E402  (3 spool-brokers on one etcd)
from acl_compat import LOG4J  # noqa: E402  (on the path through mm2_compat)

PROBE_SRC = os.path.join(HERE, "ShareFailoverProbe.java")
# The producer, topic and RESTARTED handling the failover probes extend.
SUPPORT_SRC = os.path.join(HERE, "FailoverSupport.java")

OVERRIDES = [
    "auto.create.topics.enable=false",
    "group.share.auto.offset.reset=earliest",
    # Records a dead leader had handed out come back to the group after the lock; records of
    # the members whose acknowledgement failed too.
    "group.share.record.lock.duration.ms=5000",
    "group.share.min.record.lock.duration.ms=1000",
    # Far above what a failover redelivers, so no record is archived at the limit (= lost).
    "group.share.delivery.count.limit=10",
    "share.coordinator.state.topic.min.isr=2",
]


def arg_parser(doc, records):
    """The options of a failover driver: the broker binary, the Kafka jars, the probe's record
    count and how long the killed broker stays down."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True, help="spool-broker")
    ap.add_argument("--kafka-dir", required=True, help="scripts/peers/fetch-kafka.sh --jars-only")
    ap.add_argument("--records", type=int, default=records)
    ap.add_argument("--restart-after-s", type=float, default=2.0,
                    help="how long the killed broker stays down")
    return ap


def run_failover(name, args, probe_src, overrides):
    """Compiles probe_src (class = file name) with FailoverSupport.java against the Kafka jars,
    starts three spool-brokers with overrides and runs the probe with --bootstrap and --records.
    Each `KILL <node>` line the probe prints (as many as it prints) kills that broker with
    SIGKILL; it is restarted after args.restart_after_s on its data directory and the probe gets
    `RESTARTED` on its stdin. Returns the exit status: 2 when a tool or the jars are missing, else
    the failures (the probe's exit, an unclean stop); the work directory is kept when there are
    any."""
    for tool in ("java", "javac", "etcd"):
        if shutil.which(tool) is None:
            print(f"{name}: {tool} is missing (scripts/setup.sh --with-tests)", file=sys.stderr)
            return 2
    if not os.path.isdir(os.path.join(args.kafka_dir, "libs")):
        print(f"{name}: no Kafka jars in {args.kafka_dir}/libs", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix=name.replace("_", "-") + "-")
    classes = os.path.join(work, "classes")
    os.makedirs(classes)
    cp = classes + os.pathsep + os.path.join(args.kafka_dir, "libs", "*")
    proc = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", classes, "-cp", cp,
                           SUPPORT_SRC, probe_src], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        print(f"{name}: javac failed:\n{proc.stdout}{proc.stderr}", file=sys.stderr)
        return 2

    cluster = SpoolCluster(args.bin, work, 3)
    started = time.monotonic()
    failures = 0
    try:
        cluster.start(*overrides)
        print(f"{name}: 3 brokers at {cluster.bootstrap}", flush=True)
        cmd = ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx384m",
               "-Djava.net.preferIPv4Stack=true", f"-Dlog4j2.configurationFile={LOG4J}",
               "-cp", cp, os.path.splitext(os.path.basename(probe_src))[0],
               "--bootstrap", cluster.bootstrap, "--records", str(args.records)]
        stderr = open(os.path.join(work, "probe.stderr"), "w+")
        probe = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=stderr, text=True)
        # A hang guard only: the probe ends itself (--wait-s) and reports what is missing.
        watchdog = threading.Timer(240, probe.kill)
        watchdog.start()
        try:
            for line in probe.stdout:
                print(f"  probe: {line}", end="", flush=True)
                m = re.match(r"KILL (\d+)", line)
                if m:
                    victim = int(m.group(1))
                    cluster.kill(victim)
                    print(f"{name}: killed broker {victim} (SIGKILL)", flush=True)
                    time.sleep(args.restart_after_s)
                    cluster.restart(victim)
                    print(f"{name}: restarted broker {victim}", flush=True)
                    probe.stdin.write("RESTARTED\n")
                    probe.stdin.flush()
            rc = probe.wait()
        finally:
            watchdog.cancel()
        if rc != 0:
            failures += 1
            stderr.seek(0)
            print(f"{name}: the probe exited {rc}\n{stderr.read()[-3000:]}", file=sys.stderr)
    finally:
        try:
            cluster.stop()
        except AssertionError as e:
            print(f"{name}: {e}", file=sys.stderr)
            failures += 1
    print(f"{name}: {failures} failed in {time.monotonic() - started:.0f} s")
    if failures == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"{name}: logs kept in {work} (spool-N/spool.log, probe.stderr)")
    return failures


def main():
    # 1,500 at once, then ~300/s: the producer still writes when the second broker dies.
    args = arg_parser(__doc__, 6000).parse_args()
    return run_failover("share_failover", args, PROBE_SRC, OVERRIDES)


if __name__ == "__main__":
    sys.exit(main())
