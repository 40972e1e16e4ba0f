#!/usr/bin/env python3
"""Migration both ways with MirrorMaker 2 (issue #37): one Apache Kafka broker (KRaft, version
SPOOL_KAFKA_VERSION, tests/fixtures/start-kafka.sh), a Spool cluster of three spool-brokers on one
etcd (what a deployment runs; --spool-brokers 1 starts a single broker without etcd), and Kafka's
own MirrorMaker 2 in dedicated mode (org.apache.kafka.connect.mirror.MirrorMaker with
mm2.properties here, DefaultReplicationPolicy) copying both ways at once:

  kafka_to_spool  topic mig-a on Kafka -> kafka.mig-a on Spool, group mig-a-app
  spool_to_kafka  topic mig-b on Spool -> spool.mig-b on Kafka, group mig-b-app

Each direction runs Mm2Probe.java: 3,000 records over 3 partitions, the group reads the first
2,000 on the source and commits, MirrorMaker translates its offsets (sync.group.offsets.enabled),
and the group resumes on the target and reads exactly the remaining 1,000; the copy equals the
source partition by partition. Prints PASS or FAIL per direction; the exit status is the number
of failures. docs/migration.md describes the same setup for users.

    mm2_compat.py --bin SPOOL_BROKER --kafka-dir DIR [--spool-brokers 3] [--debug]
                  (DIR: scripts/peers/fetch-kafka.sh --jars-only --mirror-maker)
                  [--group-protocol classic|consumer]
      --debug: MirrorMaker's own classes (checkpoints, offset syncs) at DEBUG in mm2.log
"""

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "acls"))
from acl_compat import LOG4J, Broker  # noqa: E402  (the same broker fixture wrapper)

PROBE_SRC = os.path.join(HERE, "Mm2Probe.java")
MM2_PROPERTIES = os.path.join(HERE, "mm2.properties")

# (check name, source alias, target alias, source topic, group)
DIRECTIONS = [
    ("kafka_to_spool", "kafka", "spool", "mig-a", "mig-a-app"),
    ("spool_to_kafka", "spool", "kafka", "mig-b", "mig-b-app"),
]

MM2_LOG4J = """status = warn
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = STDOUT
logger.clients.name = org.apache.kafka.clients
logger.clients.level = WARN
logger.mirror.name = org.apache.kafka.connect.mirror
logger.mirror.level = {mirror_level}
"""


def write_mm2_config(work, bootstraps, debug):
    """mm2.properties here with the brokers' addresses filled in, and MirrorMaker's log4j2 file."""
    with open(MM2_PROPERTIES) as f:
        text = f.read()
    for alias, bootstrap in bootstraps.items():
        text = text.replace(f"@{alias.upper()}_BOOTSTRAP@", bootstrap)
    path = os.path.join(work, "mm2.properties")
    with open(path, "w") as f:
        f.write(text)
    log4j = os.path.join(work, "mm2-log4j2.properties")
    with open(log4j, "w") as f:
        f.write(MM2_LOG4J.format(mirror_level="DEBUG" if debug else "INFO"))
    return path, log4j


def compile_probe(kafka_dir, work):
    classes = os.path.join(work, "classes")
    os.makedirs(classes, exist_ok=True)
    proc = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d", classes, "-cp",
                           os.path.join(kafka_dir, "libs", "*"), PROBE_SRC],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"mm2_compat: javac Mm2Probe.java failed:\n{proc.stdout}{proc.stderr}")
    return classes + os.pathsep + os.path.join(kafka_dir, "libs", "*")


def start_mirror_maker(kafka_dir, work, config, log4j):
    log = open(os.path.join(work, "mm2.log"), "w")
    classpath = os.pathsep.join(os.path.join(kafka_dir, d, "*") for d in ("libs", "mirror-maker"))
    cmd = ["java", "-Xmx512m", "-Xshare:auto", "-Djava.net.preferIPv4Stack=true",
           f"-Dlog4j2.configurationFile={log4j}", "-cp", classpath,
           "org.apache.kafka.connect.mirror.MirrorMaker", config]
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SpoolCluster:
    """N spool-brokers (tests/fixtures/start-spool.sh) sharing one etcd; one broker alone
    (the embedded metadata store) when N is 1."""

    def __init__(self, binary, work, brokers):
        self.brokers = [Broker("spool", binary, os.path.join(work, f"spool-{i}"))
                        for i in range(brokers)]
        self.work = work
        self.etcd = None
        self.bootstrap = None

    def start(self, *overrides):
        common = list(overrides)
        self.overrides = common
        if len(self.brokers) > 1:
            client, peer = free_port(), free_port()
            endpoint = f"http://127.0.0.1:{client}"
            log = open(os.path.join(self.work, "etcd.log"), "w")
            self.etcd = subprocess.Popen(
                ["etcd", "--name", "mm2", "--data-dir", os.path.join(self.work, "etcd"),
                 "--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
                 "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                 "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                 "--initial-cluster", f"mm2=http://127.0.0.1:{peer}"],
                stdout=log, stderr=subprocess.STDOUT)
            common += ["metadata.store=etcd", f"etcd.endpoints={endpoint}",
                       "etcd.prefix=/spool/mm2",
                       f"offsets.topic.replication.factor={min(3, len(self.brokers))}"]
        for i, broker in enumerate(self.brokers):
            broker.start(f"node.id={i}", *common)
        self.bootstrap = ",".join(b.bootstrap for b in self.brokers)

    def kill(self, i):
        """kill -9 of broker i (node.id=i): no drain, no clean-shutdown marker."""
        with open(os.path.join(self.brokers[i].data_dir, "spool.pid")) as f:
            os.kill(int(f.read().strip()), signal.SIGKILL)
        exit_file = os.path.join(self.brokers[i].data_dir, "spool.exit")
        while not os.path.exists(exit_file):  # the fixture's wrapper records the exit
            time.sleep(0.05)

    def restart(self, i):
        """Broker i again on its data directory and port, with the settings of start()."""
        self.brokers[i].start(f"node.id={i}", *self.overrides)

    def stop(self):
        try:
            for broker in self.brokers:
                if broker.bootstrap:
                    broker.stop()
        finally:
            if self.etcd is not None:
                stop(self.etcd)


def stop(proc, seconds=30):
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--bin", required=True, help="spool-broker")
    ap.add_argument("--kafka-dir", required=True,
                    help="scripts/peers/fetch-kafka.sh --jars-only --mirror-maker")
    ap.add_argument("--only", default="")
    ap.add_argument("--debug", action="store_true")
    ap.add_argument("--spool-brokers", type=int, default=3)
    ap.add_argument("--group-protocol", choices=["classic", "consumer"], default="classic")
    ap.add_argument("--timeout-s", type=int, default=120, help="per direction, ends a stuck wait")
    args = ap.parse_args()
    tools = ("java", "javac") + (("etcd",) if args.spool_brokers > 1 else ())
    for tool in tools:
        if shutil.which(tool) is None:
            print(f"mm2_compat: {tool} is missing (scripts/setup.sh --with-tests)", file=sys.stderr)
            return 2
    mm2_dir = os.path.join(args.kafka_dir, "mirror-maker")
    if not os.path.isdir(mm2_dir) or not any(j.startswith("connect-mirror-")
                                             for j in os.listdir(mm2_dir)):
        print(f"mm2_compat: no MirrorMaker 2 jars in {mm2_dir} "
              "(scripts/peers/fetch-kafka.sh --mirror-maker fetches them)", file=sys.stderr)
        return 2
    only = set(filter(None, args.only.split(",")))
    directions = [d for d in DIRECTIONS if not only or d[0] in only]

    work = tempfile.mkdtemp(prefix="mm2-compat-")
    brokers = {"kafka": Broker("kafka", None, os.path.join(work, "kafka")),
               "spool": SpoolCluster(args.bin, work, args.spool_brokers)}
    failures = 0
    started = time.monotonic()
    mm2 = None
    try:
        for broker in brokers.values():
            broker.start("auto.create.topics.enable=false")
        bootstraps = {alias: b.bootstrap for alias, b in brokers.items()}
        print(f"mm2_compat: Kafka {os.path.basename(args.kafka_dir)} at {bootstraps['kafka']}, "
              f"Spool ({args.spool_brokers} brokers) at {bootstraps['spool']}", flush=True)
        classpath = compile_probe(args.kafka_dir, work)
        config, log4j = write_mm2_config(work, bootstraps, args.debug)
        mm2, _ = start_mirror_maker(args.kafka_dir, work, config, log4j)

        probes = {}
        for name, src, dst, topic, group in directions:
            log = open(os.path.join(work, f"{name}.log"), "w+")
            cmd = ["java", "-Xmx256m", "-Xshare:auto", "-XX:TieredStopAtLevel=1",
                   "-Djava.net.preferIPv4Stack=true", f"-Dlog4j2.configurationFile={LOG4J}",
                   "-cp", classpath, "Mm2Probe", "--source", bootstraps[src], "--target",
                   bootstraps[dst], "--topic", topic, "--remote-topic", f"{src}.{topic}",
                   "--group", group, "--group-protocol", args.group_protocol,
                   "--timeout-s", str(args.timeout_s)]
            probes[name] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log)
        for name, (proc, log) in probes.items():
            try:
                rc = proc.wait(args.timeout_s + 120)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
            log.seek(0)
            lines = log.read().splitlines()
            steps = [l for l in lines if l.startswith(("step ", "FAIL "))]
            for line in steps:
                print(f"  {name}: {line}")
            if rc == 0:
                print(f"PASS {name}: {steps[-1][5:] if steps else ''}", flush=True)
            else:
                failures += 1
                fail = [l for l in lines if l.startswith("FAIL ")]
                detail = fail[-1][5:] if fail else "\n".join(lines[-20:])
                print(f"FAIL {name}: exit {rc}: {detail}", flush=True)
        if mm2.poll() is not None:
            failures += 1
            print(f"FAIL mirror_maker: exited {mm2.returncode} during the run (mm2.log)")
    finally:
        if mm2 is not None:
            stop(mm2)
        for broker in brokers.values():
            try:
                if broker.bootstrap or isinstance(broker, SpoolCluster):
                    broker.stop()
            except AssertionError as e:
                print(f"mm2_compat: {e}", file=sys.stderr)
                failures += 1
    print(f"mm2_compat: {failures} failed in {time.monotonic() - started:.0f} s")
    if failures == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"mm2_compat: logs kept in {work} (mm2.log, kafka/kafka.log, spool-N/spool.log)")
    return failures


if __name__ == "__main__":
    sys.exit(main())
