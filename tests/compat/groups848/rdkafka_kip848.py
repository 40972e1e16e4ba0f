#!/usr/bin/env python3
"""KIP-848 with librdkafka (the one bundled in confluent-kafka's wheel; Debian's 2.0.2 predates
KIP-848): two group.protocol=consumer members split a 4-partition topic and read every record
once; one closes and the other then owns all four partitions. Prints PASS/FAIL; exit 1 on FAIL.

    rdkafka_kip848.py --bootstrap HOST:PORT
"""

import argparse
import sys
import threading
import time

from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 4
PER_PARTITION = 50


def fail(why):
    print(f"FAIL librdkafka_consumer: {why}", flush=True)
    sys.exit(1)


class Member:
    def __init__(self, bootstrap, group, topic, name):
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                                  "group.protocol": "consumer", "client.id": name,
                                  "auto.offset.reset": "earliest"})
        self.consumer.subscribe([topic])
        self.values = []
        self.assignment = set()
        self.stop = threading.Event()
        self.error = None
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        try:
            while not self.stop.is_set():
                msg = self.consumer.poll(0.2)
                if msg is not None and not msg.error():
                    self.values.append(msg.value().decode())
                self.assignment = {(tp.topic, tp.partition) for tp in self.consumer.assignment()}
            self.consumer.close()
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            self.error = e

    def close(self):
        self.stop.set()
        self.thread.join(60)


def await_exactly_once(members, want, what):
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        owned = [m.assignment for m in members]
        flat = [tp for a in owned for tp in a]
        if sorted(flat) == sorted(want) and all(owned):
            return " ".join(str(sorted(p for _, p in a)) for a in owned)
        for m in members:
            if m.error:
                fail(f"{what}: {m.error}")
        time.sleep(0.2)
    fail(f"{what}: partitions not owned exactly once in 90 s: {[m.assignment for m in members]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    args = ap.parse_args()
    stamp = f"{int(time.time() * 1000):x}"
    topic, group = f"rdk848-{stamp}", f"rdk848-g-{stamp}"
    admin = AdminClient({"bootstrap.servers": args.bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": args.bootstrap, "acks": "all"})
    for p in range(PARTITIONS):
        for i in range(PER_PARTITION):
            producer.produce(topic, value=f"{p}-{i}".encode(), partition=p)
    producer.flush(30)
    want = [(topic, p) for p in range(PARTITIONS)]
    a, b = Member(args.bootstrap, group, topic, "a"), Member(args.bootstrap, group, topic, "b")
    split = await_exactly_once([a, b], want, "two members")
    deadline = time.monotonic() + 60
    while len(a.values) + len(b.values) < PARTITIONS * PER_PARTITION and time.monotonic() < deadline:
        time.sleep(0.2)
    seen = a.values + b.values
    if sorted(seen) != sorted(f"{p}-{i}" for p in range(PARTITIONS) for i in range(PER_PARTITION)):
        fail(f"read {len(seen)} records ({len(set(seen))} distinct) of {PARTITIONS * PER_PARTITION}")
    b.close()
    alone = await_exactly_once([a], want, "after b left")
    a.close()
    print(f"PASS librdkafka_consumer: split {split}; after b left {alone}; "
          f"{len(seen)} records once each", flush=True)


if __name__ == "__main__":
    main()
