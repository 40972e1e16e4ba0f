#!/usr/bin/env python3
"""A broker restart keeps every acknowledged message (checked with kcat / librdkafka).

Starts the broker under test through tests/fixtures/broker.sh, produces keyed messages with
acks=all and idempotence (gzip), stops it with SIGTERM (for Spool, a non-zero exit or a kill after
the timeout fails the check), starts it again on the same data directory and port, and checks that
every message is there at its offset, in order, and that new messages continue the offsets.

    restart_compat.py --target spool|kafka --data-dir DIR [--bin SPOOL_BROKER]
"""

import argparse
import json
import os
import subprocess
import sys
import time

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "broker.sh")
MESSAGES = 500


def broker(action, args, *extra):
    cmd = [FIXTURE, action, "--target", args.target, "--data-dir", args.data_dir, *extra]
    if args.bin:
        cmd += ["--bin", args.bin]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        raise RuntimeError(f"broker.sh {action} exited {proc.returncode}")
    return proc.stdout.strip()


def kcat(bootstrap, *args, stdin=None):
    cmd = ["kcat", "-b", bootstrap, "-m", "15", "-X", "topic.message.timeout.ms=30000", *args]
    proc = subprocess.run(cmd, input=stdin, capture_output=True, timeout=120)
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0 or "Delivery failed" in err:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err}")
    return proc.stdout.decode()


def produce(bootstrap, topic, msgs):
    kcat(bootstrap, "-P", "-t", topic, "-p", "0", "-K", "\t", "-X", "compression.codec=gzip",
         "-X", "enable.idempotence=true", "-X", "acks=all",
         stdin="".join(f"{k}\t{v}\n" for k, v in msgs).encode())


def consume(bootstrap, topic):
    out = kcat(bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-J")
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--bin", default="")
    args = parser.parse_args()
    topic = f"compat-restart-{int(time.time() * 1000):x}"
    msgs = [(f"key-{i % 5}", f"before-restart-{i}") for i in range(MESSAGES)]
    more = [(f"key-{i % 5}", f"after-restart-{i}") for i in range(10)]

    bootstrap = broker("start", args)
    try:
        produce(bootstrap, topic, msgs)
        expect(len(consume(bootstrap, topic)) == MESSAGES, "messages missing before the restart")
    finally:
        broker("stop", args)
    print("PASS produce_then_stop_cleanly", flush=True)

    port = bootstrap.rsplit(":", 1)[1]
    bootstrap = broker("start", args, "--port", port)
    try:
        records = consume(bootstrap, topic)
        expect([r["offset"] for r in records] == list(range(MESSAGES)),
               f"offsets after restart: {len(records)} records")
        expect([(r["key"], r["payload"]) for r in records] == msgs, "messages differ after restart")
        print("PASS restart_serves_every_acknowledged_message", flush=True)
        produce(bootstrap, topic, more)
        records = consume(bootstrap, topic)
        expect([r["offset"] for r in records[MESSAGES:]] == list(range(MESSAGES, MESSAGES + 10)),
               "offsets do not continue after restart")
        expect([(r["key"], r["payload"]) for r in records[MESSAGES:]] == more, "new messages differ")
        print("PASS offsets_continue_after_restart", flush=True)
    finally:
        broker("stop", args)
    print("restart: 3 passed, 0 failed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # noqa: BLE001 - report and fail
        print(f"FAIL restart: {e}")
        sys.exit(1)
