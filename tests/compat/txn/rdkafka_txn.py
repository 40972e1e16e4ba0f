"""librdkafka's transactional producer (confluent-kafka's bundled librdkafka, a transactions v1
client) against one broker: 6 transactions of 5 records over tx-a's partitions, every third
aborted, then a read_committed consumer must read exactly the committed records, each once.
Prints one summary line; exits 1 on a violation. Run by txn_compat.py's librdkafka_transactions
check with scripts/peers/fetch-python.sh's venv.

    rdkafka_txn.py BOOTSTRAP
"""

import sys

from confluent_kafka import Consumer, Producer, TopicPartition


def main():
    bootstrap = sys.argv[1]
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": "rdkafka-txn",
                  "transaction.timeout.ms": 60000})
    p.init_transactions(60)
    committed = set()
    for t in range(6):
        p.begin_transaction()
        values = [f"rd-{t}-{i}" for i in range(5)]
        for i, v in enumerate(values):
            p.produce("tx-a", v.encode(), partition=i % 3)
        if t % 3 == 2:
            p.flush(60)
            p.abort_transaction(60)
        else:
            p.commit_transaction(60)
            committed.update(values)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "rdkafka-txn-check",
                  "isolation.level": "read_committed", "enable.auto.commit": False,
                  "auto.offset.reset": "earliest"})
    c.assign([TopicPartition("tx-a", i, 0) for i in range(3)])
    seen = []
    idle = 0
    while idle < 10:
        m = c.poll(1.0)
        if m is None:
            idle += 1
            continue
        if m.error():
            continue
        v = m.value().decode()
        if v.startswith("rd-"):
            seen.append(v)
            idle = 0
    c.close()
    dupes = len(seen) - len(set(seen))
    missing = committed - set(seen)
    aborted = set(seen) - committed
    if dupes or missing or aborted:
        print(f"VIOLATION: {dupes} duplicates, missing {sorted(missing)[:5]}, aborted read "
              f"{sorted(aborted)[:5]}")
        return 1
    print(f"{len(committed)} committed records read once each, none of the aborted ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())
