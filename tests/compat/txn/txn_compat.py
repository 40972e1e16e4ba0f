#!/usr/bin/env python3
"""Transactions as applications use them (issue #33), through Apache Kafka's Java client and
Kafka Streams (TxnProbe.java), against one broker: spool-broker, or with --target kafka Apache
Kafka itself (tests/fixtures/start-kafka.sh), which is the reference for every check. Each check
prints PASS or FAIL with what it saw; the exit status is the number of failures.

  transactions_whole_and_once  60 transactions of 7 records over 5 partitions, every third
                               aborted: read_committed reads each committed one whole and once
                               and no aborted record; read_uncommitted sees the aborted ones
  no_dirty_read                an open transaction's records stay out of read_committed and
                               below the last stable offset until the commit
  zombie_fenced                a second producer with the same transactional.id fences the first
  kafka_transactions_cli       kafka-transactions (TransactionsCommand) list, describe and
                               describe-producers show a producer's open transaction; after the
                               producer is killed -9, `abort` ends it and the LSO moves past it
  consume_transform_produce    3000 inputs moved by transactional workers with
                               sendOffsetsToTransaction; the first worker halts (Runtime.halt)
                               inside a transaction, a second finishes: each input out once
  streams_exactly_once_v2      Kafka Streams counting 5000 inputs by key with exactly_once_v2;
                               the application is killed -9 mid-way and restarted: every count
                               equals its inputs
  librdkafka_transactions      librdkafka's transactional producer (rdkafka_txn.py, transactions
                               v1): 6 transactions, every third aborted; read_committed reads
                               the committed records once each and no aborted one
  transaction_version          which transaction protocol the Java client runs: the finalized
                               transaction.version (kafka-features describe's source), and the
                               producer epoch at the coordinator and on the partition after a
                               commit, an abort and a commit; KIP-890 part 2 (level 2, Kafka
                               4.x's default) bumps it by one at each, v1 keeps it
  partition_verification       KIP-890 part 1 with a raw client (raw_txn.py): a transactional
                               write to a partition the coordinator has not added to the
                               transaction is refused with INVALID_TXN_STATE, before the first
                               add, for a partition left out, and after the commit

    txn_compat.py [--target spool|kafka] [--bin SPOOL_BROKER] --kafka-dir DIR [--only CHECK,...]
                  [--transaction-version N]   (spool: spool.transaction.version; Kafka runs
                                               its default, 2)
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "acls"))
sys.path.insert(0, HERE)
from acl_compat import LOG4J, Broker  # noqa: E402  (the same broker fixture wrapper)

PROBE_SRC = os.path.join(HERE, "TxnProbe.java")


class Probe:
    def __init__(self, kafka_dir, work, bootstrap):
        self.cp = os.path.join(work, "classes") + os.pathsep + os.path.join(kafka_dir, "libs", "*")
        self.work = work
        self.bootstrap = bootstrap
        os.makedirs(os.path.join(work, "classes"), exist_ok=True)
        proc = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "-d",
                               os.path.join(work, "classes"), "-cp", self.cp, PROBE_SRC],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"txn_compat: javac TxnProbe.java failed:\n{proc.stdout}{proc.stderr}")

    def command(self, sub, *args):
        return ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx384m",
                "-Djava.net.preferIPv4Stack=true", f"-Dlog4j2.configurationFile={LOG4J}",
                "-cp", self.cp, "TxnProbe", sub, "--bootstrap", self.bootstrap, *map(str, args)]

    def run(self, sub, *args, timeout=300):
        proc = subprocess.run(self.command(sub, *args), capture_output=True, text=True,
                              timeout=timeout)
        return proc.returncode, (proc.stdout + proc.stderr[-3000:]).strip()

    def spawn(self, sub, *args):
        log = open(os.path.join(self.work, f"{sub}.{time.monotonic_ns()}.log"), "w+")
        return subprocess.Popen(self.command(sub, *args), stdout=log, stderr=subprocess.STDOUT), log


def step(probe, sub, *args, timeout=300):
    rc, out = probe.run(sub, *args, timeout=timeout)
    if rc != 0:
        raise AssertionError(f"{sub} exited {rc}: {out}")
    return out.splitlines()[-1] if out else ""


# Spool's /metrics (the target's HTTP listener; None against Kafka, which serves JMX instead).
METRICS_URL = None
EXPECTED_TV = 2  # the finalized transaction.version the target runs


def metric(name):
    with urllib.request.urlopen(METRICS_URL, timeout=10) as r:
        text = r.read().decode()
    m = re.search(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)
    if m is None:
        raise AssertionError(f"/metrics has no {name}")
    return float(m.group(1))


def wait_metric(name, pred, what, seconds=20):
    value = None
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = metric(name)
        if pred(value):
            return value
        time.sleep(0.5)
    raise AssertionError(f"{name} = {value}, expected {what} within {seconds} s")


def check_transactions(probe):
    journal = os.path.join(probe.work, "journal.txt")
    step(probe, "txns", "--id", "t1", "--txns", 60, "--per-txn", 7, "--journal", journal)
    return step(probe, "check-txns", "--id", "t1", "--journal", journal)


def check_dirty_read(probe):
    return step(probe, "dirty-read")


def check_fence(probe):
    return step(probe, "fence")


def tool(probe, *args):
    cmd = ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx256m",
           f"-Dlog4j2.configurationFile={LOG4J}", "-cp", probe.cp,
           "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", probe.bootstrap,
           *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"kafka-transactions {' '.join(args)} exited {proc.returncode}: "
                             f"{proc.stdout}{proc.stderr[-2000:]}")
    return proc.stdout


def check_cli(probe):
    proc, log = probe.spawn("open-txn", "--id", "probe-cli")
    try:
        first = None
        for _ in range(300):
            log.seek(0)
            lines = [line for line in log.read().splitlines() if line.startswith("open at ")]
            if lines:
                first = int(lines[-1].split()[-1])
                break
            if proc.poll() is not None:
                break
            time.sleep(0.2)
        if first is None:
            log.seek(0)
            raise AssertionError(f"open-txn did not open a transaction: {log.read()[-3000:]}")
        listed = tool(probe, "list")
        row = [line for line in listed.splitlines() if "probe-cli" in line]
        if not row or "Ongoing" not in row[0]:
            raise AssertionError(f"list does not show probe-cli Ongoing:\n{listed}")
        described = tool(probe, "describe", "--transactional-id", "probe-cli")
        if "Ongoing" not in described or "tx-cli-0" not in described:
            raise AssertionError(f"describe lacks Ongoing / tx-cli-0:\n{described}")
        producers = tool(probe, "describe-producers", "--topic", "tx-cli", "--partition", "0")
        if not any(line.split()[-1:] == [str(first)] or f" {first} " in f" {line} "
                   for line in producers.splitlines()[1:]):
            raise AssertionError(f"describe-producers does not show the transaction started at "
                                 f"{first}:\n{producers}")
        if METRICS_URL:
            # The hanging-transaction metrics see it (the logs are counted every 5 s).
            wait_metric("spool_transactions_open", lambda v: v >= 1, ">= 1")
            wait_metric("spool_transaction_coordinator_ongoing", lambda v: v >= 1, ">= 1")
            if metric("spool_transactions_oldest_open_seconds") < 0:
                raise AssertionError("spool_transactions_oldest_open_seconds is negative")
    finally:
        proc.kill()
        proc.wait()
    lso_before = int(step(probe, "lso").split()[-1])
    if lso_before != first:
        raise AssertionError(f"LSO {lso_before} with a transaction open at {first}")
    tool(probe, "abort", "--topic", "tx-cli", "--partition", "0", "--start-offset", str(first))
    for _ in range(50):
        lso = int(step(probe, "lso").split()[-1])
        if lso > first:
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"the LSO stayed at {lso} after kafka-transactions abort")
    shown = ""
    if METRICS_URL:
        # The tool's abort wrote the marker behind the coordinator's back, so only the log side
        # closes; the coordinator aborts its own at transaction.timeout.ms.
        wait_metric("spool_transactions_open", lambda v: v == 0, "0")
        shown = "; spool_transactions_open went 1 -> 0"
    return (f"list/describe/describe-producers showed the transaction open at {first}; "
            f"after abort the LSO moved {lso_before} -> {lso}{shown}")


def epochs(text, what):
    m = re.search(rf"^{what} epochs \[([0-9, ]*)\]$", text, re.M)
    if not m:
        raise AssertionError(f"no {what} epochs in:\n{text}")
    return [int(x) for x in m.group(1).split(",")]


def check_transaction_version(probe):
    rc, out = probe.run("tv", "--id", "probe-tv")
    found = re.search(r"^finalized transaction.version (\d+)$", out, re.M)
    if rc != 0 or not found:
        raise AssertionError(f"tv exited {rc}: {out}")
    level = int(found.group(1))
    if level != EXPECTED_TV:
        raise AssertionError(f"finalized transaction.version {level}, expected {EXPECTED_TV}")
    coordinator, partition = epochs(out, "coordinator"), epochs(out, "partition")
    first = coordinator[0]
    step_by = 1 if level >= 2 else 0  # KIP-890 part 2: one bump per commit or abort
    want_coordinator = [first + i * step_by for i in range(4)]
    want_partition = want_coordinator[1:]
    if coordinator != want_coordinator or partition != want_partition:
        raise AssertionError(f"producer epochs: coordinator {coordinator} (expected "
                             f"{want_coordinator}), tx-tv-0 {partition} (expected "
                             f"{want_partition})")
    return (f"transaction.version {level}; epochs after init/commit/abort/commit: coordinator "
            f"{coordinator}, partition markers {partition}")


def check_metrics(probe):
    committed = metric("spool_transactions_committed_total")
    aborted = metric("spool_transactions_aborted_total")
    if committed < 1 or aborted < 1:
        raise AssertionError(f"after the checks the coordinator counted {committed} commits and "
                             f"{aborted} aborts")
    return f"committed {committed:.0f}, aborted {aborted:.0f} transactions by the counters"


def check_ctp(probe):
    n = 3000
    step(probe, "ctp-input", "--n", n)
    rc, out = probe.run("ctp-worker", "--group", "ctp", "--txn-id", "ctp-1", "--crash-after", 3)
    if rc != 3:
        raise AssertionError(f"the first worker should halt inside its 4th transaction (exit 3), "
                             f"exited {rc}: {out}")
    # The same transactional.id: its InitProducerId aborts what the halted one left open.
    step(probe, "ctp-worker", "--group", "ctp", "--txn-id", "ctp-1")
    return step(probe, "ctp-check", "--group", "ctp", "--n", n)


def check_streams(probe):
    n, keys = 5000, 10
    step(probe, "streams-input", "--n", n, "--keys", keys)
    state = os.path.join(probe.work, "streams-state")
    args = ["--app-id", "eos-count", "--state-dir", state, "--n", n, "--keys", keys]
    proc, log = probe.spawn("streams", *args, "--max-seconds", 120, "--slow-ms", 2)
    # kill -9 once some counts are out but not all: the restarted instance must neither lose nor
    # double count what the dead one had in flight.
    deadline = time.monotonic() + 120
    killed_at = None
    while time.monotonic() < deadline and proc.poll() is None and killed_at is None:
        log.seek(0)
        counted = [int(line.split()[1]) for line in log.read().splitlines()
                   if line.startswith("counted ")]
        if counted and 0 < counted[-1] < n:
            proc.send_signal(signal.SIGKILL)
            killed_at = counted[-1]
        time.sleep(0.2)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    if killed_at is None:
        log.seek(0)
        raise AssertionError("the Streams application was not caught between its first count "
                             f"and the last: {log.read()[-3000:]}")
    step(probe, "streams", *args, "--max-seconds", 180, timeout=300)
    return f"killed -9 at {killed_at} of {n} counted, restarted; " + step(probe, "streams-check", "--n", n,
                                                               "--keys", keys)


def check_verification(probe):
    import raw_txn
    host, port = probe.bootstrap.rsplit(":", 1)
    c = raw_txn.Client(host, int(port))
    try:
        txn_id = "probe-verify"
        for _ in range(100):
            if c.find_coordinator(txn_id) == 0:
                break
            time.sleep(0.1)
        for _ in range(100):
            error, pid, epoch = c.init_producer_id(txn_id)
            if error == 0:
                break
            time.sleep(0.1)
        if error != 0:
            raise AssertionError(f"InitProducerId answered {error}")
        want = (48, "Partition was not added to the transaction")

        def produce(topic, seq):
            return c.produce(txn_id, topic, 0, raw_txn.txn_batch(pid, epoch, seq, b"v"))

        seen = [("before any add", produce("tx-a", 0))]
        added = c.add_partitions(txn_id, pid, epoch, "tx-a", [0])
        if added != {"tx-a-0": 0}:
            raise AssertionError(f"AddPartitionsToTxn answered {added}")
        inside = produce("tx-a", 0)
        if inside[0] != 0:
            raise AssertionError(f"a write to an added partition answered {inside}")
        seen.append(("a partition left out", produce("tx-b", 0)))
        if c.end_txn(txn_id, pid, epoch, True) != 0:
            raise AssertionError("EndTxn(commit) failed")
        # Until the commit marker is in tx-a-0 the transaction is still open there and a write
        # joins it; a retried EndTxn answers CONCURRENT_TRANSACTIONS until every marker is out.
        for _ in range(100):
            if c.end_txn(txn_id, pid, epoch, True) != 51:
                break
            time.sleep(0.1)
        seen.append(("after the commit", produce("tx-a", 1)))
        wrong = [f"{what}: {got}" for what, got in seen if got != want]
        if wrong:
            raise AssertionError(f"expected {want}; " + "; ".join(wrong))
        return (f"{want} before any add, for a partition left out and after the commit; "
                f"the added partition took the write")
    finally:
        c.close()


def check_rdkafka(probe):
    peer = subprocess.run(["bash", os.path.join(HERE, "..", "..", "..", "scripts", "peers",
                                                "fetch-python.sh")],
                          capture_output=True, text=True, timeout=600)
    if peer.returncode != 0:
        raise AssertionError(f"fetch-python.sh failed: {peer.stderr[-2000:]}")
    python = os.path.join(peer.stdout.strip(), "venv", "bin", "python")
    proc = subprocess.run([python, os.path.join(HERE, "rdkafka_txn.py"), probe.bootstrap],
                          capture_output=True, text=True, timeout=300)
    out = (proc.stdout + proc.stderr[-2000:]).strip()
    if proc.returncode != 0:
        raise AssertionError(f"rdkafka_txn.py exited {proc.returncode}: {out}")
    return out.splitlines()[-1]


CHECKS = [
    ("transactions_whole_and_once", check_transactions),
    ("no_dirty_read", check_dirty_read),
    ("zombie_fenced", check_fence),
    ("kafka_transactions_cli", check_cli),
    ("consume_transform_produce", check_ctp),
    ("streams_exactly_once_v2", check_streams),
    ("transaction_version", check_transaction_version),
    ("partition_verification", check_verification),
    ("librdkafka_transactions", check_rdkafka),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["spool", "kafka"], default="spool")
    ap.add_argument("--bin")
    ap.add_argument("--kafka-dir", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--transaction-version", type=int, choices=[0, 1, 2])
    args = ap.parse_args()
    if args.target == "spool" and not args.bin:
        ap.error("--bin is required for the spool target")
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            print(f"txn_compat: {tool} is missing (scripts/setup.sh --with-tests)", file=sys.stderr)
            return 2
    only = set(filter(None, args.only.split(",")))
    work = tempfile.mkdtemp(prefix=f"txn-compat-{args.target}-")
    broker = Broker(args.target, args.bin, os.path.join(work, "data"))
    failures = 0
    started = time.monotonic()
    global METRICS_URL, EXPECTED_TV
    overrides = ["auto.create.topics.enable=false"]
    if args.transaction_version is not None:
        if args.target != "spool":
            ap.error("--transaction-version is for the spool target (Kafka runs its default)")
        overrides.append(f"spool.transaction.version={args.transaction_version}")
        EXPECTED_TV = args.transaction_version
    checks = list(CHECKS)
    if args.target == "spool":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            http_port = s.getsockname()[1]
        overrides.append(f"http.listener=127.0.0.1:{http_port}")
        METRICS_URL = f"http://127.0.0.1:{http_port}/metrics"
        checks.append(("transaction_metrics", check_metrics))  # Spool's own; Kafka has JMX
    try:
        broker.start(*overrides)
        probe = Probe(args.kafka_dir, work, broker.bootstrap)
        step(probe, "setup")
        for name, check in checks:
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
            print(f"txn_compat: {e}", file=sys.stderr)
            failures += 1
    print(f"txn_compat {args.target}: {failures} failed in {time.monotonic() - started:.0f} s")
    if failures == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"txn_compat: logs kept in {work}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
