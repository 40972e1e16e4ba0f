#!/usr/bin/env python3
"""kcat (librdkafka 2.0.2 from Debian) compatibility checks for Spool.

kcat has no admin API: topics are auto-created by producing (the broker's
auto.create.topics.enable and num.partitions) and described with -L metadata. Per compression
codec kcat's librdkafka supports (none, gzip, snappy, lz4, zstd) it produces keyed messages with
idempotence on, then reads the partition back by assignment (-C -p, no group) and checks content,
order and offsets; -Q checks the offset lookups.

    kcat_compat.py --bootstrap HOST:PORT

Prints PASS/FAIL/SKIP per check and a summary; exits 1 unless every check passed.
"""

import argparse
import json
import socket
import subprocess
import sys
import time

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
MESSAGES = 200
TIMEOUT_S = 60


class CheckFailed(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def reachable(bootstrap):
    host, port = bootstrap.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=2).close()
        return True
    except OSError:
        return False


class Runner:
    """Reports checks; skips those whose dependency did not pass, and everything after a failure
    that left the broker unreachable (a crash), instead of letting each wait for its timeout."""

    def __init__(self, bootstrap):
        self.bootstrap = bootstrap
        self.passed, self.failed, self.skipped = 0, [], []
        self.broker_down = False

    def check(self, name, depends_on, body):
        if self.broker_down:
            self.skipped.append(name)
            print(f"SKIP {name} (broker unreachable)", flush=True)
            return
        for dep in depends_on:
            if dep in self.failed or dep in self.skipped:
                self.skipped.append(name)
                print(f"SKIP {name} (needs {dep})", flush=True)
                return
        start = time.monotonic()
        try:
            body()
        except Exception as e:  # noqa: BLE001 - any error fails the check and is reported
            self.failed.append(name)
            print(f"FAIL {name} ({(time.monotonic() - start) * 1000:.0f} ms): {e}", flush=True)
            if not reachable(self.bootstrap):
                self.broker_down = True
                print(f"broker at {self.bootstrap} no longer accepts connections: skipping the rest")
            return
        self.passed += 1
        print(f"PASS {name} ({(time.monotonic() - start) * 1000:.0f} ms)", flush=True)


def kcat(bootstrap, *args, stdin=None):
    """Runs kcat and returns stdout; a non-zero exit or a delivery error fails the check."""
    cmd = ["kcat", "-b", bootstrap, "-m", "15", "-X", "topic.message.timeout.ms=30000", *args]
    proc = subprocess.run(cmd, input=stdin, capture_output=True, timeout=TIMEOUT_S)
    err = proc.stderr.decode(errors="replace")
    expect(proc.returncode == 0, f"{' '.join(cmd)} exited {proc.returncode}: {err}")
    expect("Delivery failed" not in err, f"delivery failed: {err}")
    return proc.stdout.decode()


def workload(label):
    """(key, value) pairs; every 50th value is empty, sent as NULL (-Z)."""
    out = []
    for i in range(MESSAGES):
        value = "" if i % 50 == 49 else f"{label}-{i}-" + "v" * ((i % 5) * 150)
        out.append((f"key-{i % 7}", value))
    return out


def metadata(bootstrap, topic=None):
    args = ["-L", "-J"] + (["-t", topic] if topic else [])
    return json.loads(kcat(bootstrap, *args))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap", required=True)
    bootstrap = parser.parse_args().bootstrap
    prefix = f"compat-kcat-{int(time.time() * 1000):x}"
    r = Runner(bootstrap)

    def check_metadata():
        md = metadata(bootstrap)
        expect(len(md["brokers"]) == 1, f"brokers: {md['brokers']}")
        expect(md["brokers"][0]["name"].endswith(bootstrap.split(":")[-1]),
               f"advertised broker {md['brokers'][0]['name']} is not {bootstrap}")

    r.check("metadata", [], check_metadata)

    for codec in CODECS:
        topic = f"{prefix}-{codec}"
        msgs = workload(f"kcat-{codec}")

        def produce(topic=topic, codec=codec, msgs=msgs):
            stdin = "".join(f"{k}\t{v}\n" for k, v in msgs).encode()
            # -K splits key and value on the tab; -Z sends the empty values as NULL.
            kcat(bootstrap, "-P", "-t", topic, "-K", "\t", "-Z", "-H", "origin=kcat",
                 "-X", f"compression.codec={codec}", "-X", "enable.idempotence=true",
                 "-X", "acks=all", stdin=stdin)

        def describe(topic=topic):
            md = metadata(bootstrap, topic)
            topics = [t for t in md["topics"] if t["topic"] == topic]
            expect(len(topics) == 1, f"topic {topic} not in metadata: {md['topics']}")
            t = topics[0]
            expect("error" not in t, f"topic error: {t.get('error')}")
            expect(len(t["partitions"]) >= 1, "no partitions")
            for p in t["partitions"]:
                expect(p["leader"] == md["brokers"][0]["id"], f"partition {p['partition']} leader {p['leader']}")
                expect(len(p["replicas"]) == 1 and len(p["isrs"]) == 1, f"replicas/isr of {p}")

        def consume(topic=topic, msgs=msgs):
            # Auto-created with the broker's num.partitions; every message is in partition 0 when
            # that is 1. With more partitions, read each and check order per key instead.
            md = metadata(bootstrap, topic)
            parts = [p["partition"] for t in md["topics"] if t["topic"] == topic for p in t["partitions"]]
            got = []
            for p in parts:
                out = kcat(bootstrap, "-C", "-t", topic, "-p", str(p), "-o", "beginning", "-e", "-J",
                           "-X", "check.crcs=true")
                records = [json.loads(line) for line in out.splitlines() if line.strip()]
                offsets = [rec["offset"] for rec in records]
                expect(offsets == list(range(len(records))),
                       f"partition {p}: offsets not dense from 0: {offsets[:10]}...")
                got.extend(records)
            expect(len(got) == len(msgs), f"consumed {len(got)} of {len(msgs)} messages")
            by_key = {}
            for rec in got:
                by_key.setdefault(rec["key"], []).append(rec)
            for key in {k for k, _ in msgs}:
                want = [v for k, v in msgs if k == key]
                have = by_key.get(key, [])
                expect(len({rec["partition"] for rec in have}) == 1, f"key {key} spans partitions")
                values = [rec["payload"] if rec["payload"] is not None else "" for rec in have]
                expect(values == want, f"key {key}: values differ or out of order")
                nulls = [rec for rec in have if rec["payload"] is None]
                expect(len(nulls) == want.count(""), f"key {key}: {len(nulls)} NULL values, want {want.count('')}")
                for rec in have:
                    expect(rec.get("headers") == ["origin", "kcat"], f"headers {rec.get('headers')}")
            if len(parts) == 1:
                expect([(rec["key"], rec["payload"] or "") for rec in got] == msgs,
                       "partition 0 does not hold the messages in send order")

        def consume_from_offset(topic=topic, msgs=msgs):
            md = metadata(bootstrap, topic)
            if len(md["topics"][0]["partitions"]) != 1:
                return  # offsets per message are only predictable with one partition
            out = kcat(bootstrap, "-C", "-t", topic, "-p", "0", "-o", "100", "-c", "10", "-J")
            records = [json.loads(line) for line in out.splitlines() if line.strip()]
            expect([rec["offset"] for rec in records] == list(range(100, 110)),
                   f"offsets {[rec['offset'] for rec in records]}")
            expect([(rec["key"], rec["payload"] or "") for rec in records] == msgs[100:110],
                   "messages at offsets 100..109 differ")

        def query_offsets(topic=topic, msgs=msgs):
            md = metadata(bootstrap, topic)
            parts = [p["partition"] for p in md["topics"][0]["partitions"]]
            total = 0
            for p in parts:
                # -Q with timestamp -1 (latest) / -2 (earliest) lists the end / start offset.
                end = kcat(bootstrap, "-Q", "-t", f"{topic}:{p}:-1")
                start = kcat(bootstrap, "-Q", "-t", f"{topic}:{p}:-2")
                expect(f"[{p}] offset 0" in start, f"start offset of partition {p}: {start}")
                total += int(end.split("offset")[-1].strip())
            expect(total == len(msgs), f"end offsets add up to {total}, want {len(msgs)}")

        r.check(f"produce_{codec}", ["metadata"], produce)
        r.check(f"describe_{codec}", [f"produce_{codec}"], describe)
        r.check(f"consume_{codec}", [f"produce_{codec}"], consume)
        r.check(f"consume_from_offset_{codec}", [f"produce_{codec}"], consume_from_offset)
        r.check(f"query_offsets_{codec}", [f"produce_{codec}"], query_offsets)

    print(f"kcat: {r.passed} passed, {len(r.failed)} failed, {len(r.skipped)} skipped")
    if r.failed:
        print("failed: " + ", ".join(r.failed))
    return 0 if not r.failed and not r.skipped else 1


if __name__ == "__main__":
    sys.exit(main())
