#!/usr/bin/env python3
"""A KIP-848 consumer group across a kill -9 of its group coordinator, with Apache Kafka's Java
KafkaConsumer and group.protocol=consumer (Kip848FailoverProbe.java): three members of one group
consume a topic of 6 partitions with replication factor 3 on a Spool cluster of three brokers on
one etcd (mm2_compat.SpoolCluster), committing with commitSync after each poll, while a producer
writes it with acks=all. Once the group is stable and a quarter of the records are committed the
probe names the group's coordinator (Admin.describeConsumerGroups); this script kills it with
SIGKILL, restarts it on its data directory, and tells the probe. Checked:

  - every produced record is consumed at least once, none lost, and each one is committed;
  - at-least-once only: duplicates are counted, and no record is delivered again once a
    commitSync covering it returned;
  - the group was reloaded by the next coordinator, not rebuilt: no member's onPartitionsLost
    runs after the kill, no member's epoch (groupMetadata().generationId()) drops below its value
    before the kill, nor the group epoch; at the end Admin shows type CONSUMER, state STABLE,
    3 members, the 6 partitions owned once.

commitSync errors during the failover are counted and printed, not failures. Prints the counts
and each member's epochs and rebalance callbacks; the exit status is the failures.

    kip848_failover.py --bin SPOOL_BROKER --kafka-dir DIR [--records N]
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "share"))
from share_failover import arg_parser, run_failover  # noqa: E402  (the kill-and-restart driver)

PROBE_SRC = os.path.join(HERE, "Kip848FailoverProbe.java")

OVERRIDES = [
    "auto.create.topics.enable=false",
    # __consumer_offsets takes the broker default: the coordinator's appends (offset commits,
    # group records) count as written once a second replica has them, so the kill of one broker
    # cannot take them (as share_failover's share.coordinator.state.topic.min.isr=2).
    "min.insync.replicas=2",
]


def main():
    args = arg_parser(__doc__, 6000).parse_args()
    return run_failover("kip848_failover", args, PROBE_SRC, OVERRIDES)


if __name__ == "__main__":
    sys.exit(main())
