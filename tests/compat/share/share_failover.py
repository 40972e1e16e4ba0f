#!/usr/bin/env python3
"""KIP-932 share groups across a kill -9 of a partition's leader (issue #35), with Apache Kafka's
Java KafkaShareConsumer (ShareFailoverProbe.java): three members of one share group consume a
topic of 3 partitions with replication factor 3 on a Spool cluster of three brokers on one etcd
(mm2_compat.SpoolCluster) while a producer writes it with acks=all. Once a quarter of the records
are acknowledged the probe names partition 0's leader; this script kills it with SIGKILL, restarts
it on its data directory, and tells the probe. Every produced record must be processed at least
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True, help="spool-broker")
    ap.add_argument("--kafka-dir", required=True, help="scripts/peers/fetch-kafka.sh --jars-only")
    ap.add_argument("--records", type=int, default=3000)
    ap.add_argument("--restart-after-s", type=float, default=2.0,
                    help="how long the killed broker stays down")
    args = ap.parse_args()
    for tool in ("java", "javac", "etcd"):
        if shutil.which(tool) is None:
            print(f"share_failover: {tool} is missing (scripts/setup.sh --with-tests)",
                  file=sys.stderr)
            return 2
    if not os.path.isdir(os.path.join(args.kafka_dir, "libs")):
        print(f"share_failover: no Kafka jars in {args.kafka_dir}/libs", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="share-failover-")
    classes = os.path.join(work, "classes")
    os.makedirs(classes)
    cp = classes + os.pathsep + os.path.join(args.kafka_dir, "libs", "*")
    proc = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", classes, "-cp", cp,
                           PROBE_SRC], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        print(f"share_failover: javac failed:\n{proc.stdout}{proc.stderr}", file=sys.stderr)
        return 2

    cluster = SpoolCluster(args.bin, work, 3)
    started = time.monotonic()
    failures = 0
    killed = None
    try:
        cluster.start(*OVERRIDES)
        print(f"share_failover: 3 brokers at {cluster.bootstrap}", flush=True)
        cmd = ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx384m",
               "-Djava.net.preferIPv4Stack=true", f"-Dlog4j2.configurationFile={LOG4J}",
               "-cp", cp, "ShareFailoverProbe", "--bootstrap", cluster.bootstrap,
               "--records", str(args.records)]
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
                if m and killed is None:
                    killed = int(m.group(1))
                    cluster.kill(killed)
                    print(f"share_failover: killed broker {killed} (SIGKILL)", flush=True)
                    time.sleep(args.restart_after_s)
                    cluster.restart(killed)
                    print(f"share_failover: restarted broker {killed}", flush=True)
                    probe.stdin.write("RESTARTED\n")
                    probe.stdin.flush()
            rc = probe.wait()
        finally:
            watchdog.cancel()
        if rc != 0:
            failures += 1
            stderr.seek(0)
            print(f"share_failover: the probe exited {rc}\n{stderr.read()[-3000:]}",
                  file=sys.stderr)
    finally:
        try:
            cluster.stop()
        except AssertionError as e:
            print(f"share_failover: {e}", file=sys.stderr)
            failures += 1
    print(f"share_failover: {failures} failed in {time.monotonic() - started:.0f} s")
    if failures == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"share_failover: logs kept in {work} (spool-N/spool.log, probe.stderr)")
    return failures


if __name__ == "__main__":
    sys.exit(main())
