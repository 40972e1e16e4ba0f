#!/usr/bin/env python3
"""GROUP config resources (Kafka's GroupConfig, resource type 32) through Kafka 4.4.0's
kafka-configs (ConfigCommand --entity-type groups) against one broker: spool-broker, or with
--target kafka Apache Kafka itself (tests/fixtures/start-kafka.sh), the reference. Both targets
must print the same lines for every step:

  defaults      --describe --all of a group nobody used: Kafka's 21 non-internal keys at their
                defaults (DEFAULT_CONFIG, under the broker synonym's name), and --describe says
                it has no dynamic config (the tool asks ListConfigResources, API 74)
  alter         --alter --add-config share.auto.offset.reset=earliest,consumer.session.timeout.ms=50000
                on that group (it does not exist yet), then --describe shows exactly those two as
                DYNAMIC_GROUP_CONFIG, and --describe without --entity-name lists that group
  refusals      an unknown key, a bad share.auto.offset.reset, a session timeout below
                group.consumer.min.session.timeout.ms, a heartbeat interval above
                group.consumer.max.heartbeat.interval.ms, a non-number: each refused with Kafka
                4.4's InvalidConfigurationException message, nothing changed
  effect        10 records produced before any member joined; kafka-console-share-consumer of the
                group reads all 10 (share.auto.offset.reset=earliest of the group; the broker's
                default is latest on both targets)
  delete_config --alter --delete-config consumer.session.timeout.ms: only the reset is left
  group_deleted kafka-share-groups --delete of the (empty) group: its config stays (Kafka keeps
                GROUP configs apart from the group)

    group_configs.py [--target spool|kafka] [--bin SPOOL_BROKER] --kafka-dir DIR
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "acls"))
from acl_compat import Broker, kcat  # noqa: E402  (the shared broker fixture wrapper)
from share_tool import CONFIGS, CONSOLE, JAVA, TOOL as SHARE, TOPICS, Tool, expect  # noqa: E402

GROUP = "cfg-group"
TOPIC = "cfg-topic"

DEFAULTS = [
    "consumer.assignment.interval.ms=1000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.consumer.assignment.interval.ms=1000}",
    "consumer.heartbeat.interval.ms=5000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.consumer.heartbeat.interval.ms=5000}",
    "consumer.session.timeout.ms=45000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}",
    "errors.deadletterqueue.copy.record.enable=false sensitive=false "
    "synonyms={DEFAULT_CONFIG:errors.deadletterqueue.copy.record.enable=false}",
    "errors.deadletterqueue.topic.name= sensitive=false "
    "synonyms={DEFAULT_CONFIG:errors.deadletterqueue.topic.name=}",
    "share.assignment.interval.ms=1000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.share.assignment.interval.ms=1000}",
    "share.auto.offset.reset=latest sensitive=false "
    "synonyms={DEFAULT_CONFIG:share.auto.offset.reset=latest}",
    "share.delivery.count.limit=5 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.share.delivery.count.limit=5}",
    "share.heartbeat.interval.ms=5000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.share.heartbeat.interval.ms=5000}",
    "share.isolation.level=read_uncommitted sensitive=false "
    "synonyms={DEFAULT_CONFIG:share.isolation.level=read_uncommitted}",
    "share.partition.max.record.locks=2000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.share.partition.max.record.locks=2000}",
    "share.record.lock.duration.ms=30000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.share.record.lock.duration.ms=30000}",
    "share.renew.acknowledge.enable=true sensitive=false "
    "synonyms={DEFAULT_CONFIG:share.renew.acknowledge.enable=true}",
    "share.session.timeout.ms=45000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.share.session.timeout.ms=45000}",
    "streams.assignment.interval.ms=1000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.streams.assignment.interval.ms=1000}",
    "streams.assignor.name=sticky sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.streams.assignors=sticky}",
    "streams.heartbeat.interval.ms=5000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.streams.heartbeat.interval.ms=5000}",
    "streams.initial.rebalance.delay.ms=3000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.streams.initial.rebalance.delay.ms=3000}",
    "streams.num.standby.replicas=0 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.streams.num.standby.replicas=0}",
    "streams.rack.aware.assignment.tags= sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.streams.rack.aware.assignment.tags=}",
    "streams.session.timeout.ms=45000 sensitive=false "
    "synonyms={DEFAULT_CONFIG:group.streams.session.timeout.ms=45000}",
]
RESET = ("share.auto.offset.reset=earliest sensitive=false "
         "synonyms={DYNAMIC_GROUP_CONFIG:share.auto.offset.reset=earliest, "
         "DEFAULT_CONFIG:share.auto.offset.reset=latest}")
SESSION = ("consumer.session.timeout.ms=50000 sensitive=false "
           "synonyms={DYNAMIC_GROUP_CONFIG:consumer.session.timeout.ms=50000, "
           "DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}")


def entries(text):
    """The config lines of a --describe output (indented), in order."""
    return [line.strip() for line in text.splitlines() if line.startswith("  ")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["spool", "kafka"], default="spool")
    ap.add_argument("--bin")
    ap.add_argument("--kafka-dir", required=True)
    args = ap.parse_args()
    if args.target == "spool" and not args.bin:
        ap.error("--bin is required for the spool target")
    work = tempfile.mkdtemp(prefix=f"group-configs-{args.target}-")
    broker = Broker(args.target, args.bin, os.path.join(work, "data"))
    started = time.monotonic()
    failures = 0
    try:
        broker.start("auto.create.topics.enable=false")
        tool = Tool(broker, args.kafka_dir)

        def configs(*more, check=True):
            return tool.run(CONFIGS, "--entity-type", "groups", *more, check=check)

        def describe(group=GROUP, *more):
            return configs("--describe", "--entity-name", group, *more).stdout

        def refused(setting, message):
            proc = configs("--alter", "--entity-name", GROUP, "--add-config", setting,
                           check=False)
            text = proc.stdout + proc.stderr
            expect(proc.returncode != 0, f"{setting} accepted:\n{text}")
            expect(f"InvalidConfigurationException: {message}" in text,
                   f"{setting}: expected '{message}':\n{text}")

        def step(name, fn):
            nonlocal failures
            try:
                fn()
                print(f"PASS {name}")
            except AssertionError as e:
                failures += 1
                print(f"FAIL {name}: {e}")

        def defaults():
            out = describe(GROUP, "--all")
            expect(entries(out) == DEFAULTS, f"--describe --all:\n{out}")
            out = describe()
            expect(f"The group '{GROUP}' doesn't exist and doesn't have dynamic config." in out,
                   f"--describe of an unused group:\n{out}")

        def alter():
            out = configs("--alter", "--entity-name", GROUP, "--add-config",
                          "share.auto.offset.reset=earliest,consumer.session.timeout.ms=50000"
                          ).stdout
            expect(f"Completed updating config for group {GROUP}." in out, f"--alter:\n{out}")
            out = describe()
            expect(f"Dynamic configs for group {GROUP} are:" in out and
                   entries(out) == [SESSION, RESET], f"--describe:\n{out}")
            listed = entries(describe(GROUP, "--all"))
            expect(SESSION in listed and RESET in listed and len(listed) == len(DEFAULTS),
                   f"--describe --all: {listed}")
            # Without --entity-name the tool describes every group that has configs (asked with
            # ListConfigResources) or exists: here only the one just configured.
            out = configs("--describe").stdout
            expect(out.count("Dynamic configs for group ") == 1 and
                   f"Dynamic configs for group {GROUP} are:" in out and
                   entries(out) == [SESSION, RESET], f"--describe of every group:\n{out}")

        def refusals():
            refused("bogus.key=1", "Unknown group config name: bogus.key")
            refused("share.auto.offset.reset=middle",
                    "Invalid value middle for configuration share.auto.offset.reset: Invalid "
                    "value `middle` for configuration share.auto.offset.reset. The value must be "
                    "either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.")
            refused("consumer.session.timeout.ms=1000",
                    "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.")
            refused("consumer.heartbeat.interval.ms=46000",
                    "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.")
            refused("share.record.lock.duration.ms=abc",
                    "Invalid value abc for configuration share.record.lock.duration.ms: Not a "
                    "number of type INT")
            out = describe()
            expect(entries(out) == [SESSION, RESET], f"after the refusals:\n{out}")

        def effect():
            tool.run(TOPICS, "--create", "--topic", TOPIC, "--partitions", "1",
                     "--replication-factor", "1")
            payload = "".join(f"r{i}\n" for i in range(10))
            proc = kcat(broker.bootstrap, "-P", "-t", TOPIC, "-p", "0", "-X", "acks=all",
                        stdin=payload)
            expect(proc.returncode == 0, f"kcat produce failed: {proc.stderr}")
            proc = subprocess.run(
                JAVA + ["-cp", tool.cp, CONSOLE, "--bootstrap-server", broker.bootstrap,
                        "--topic", TOPIC, "--group", GROUP, "--max-messages", "10",
                        "--timeout-ms", "60000"],
                capture_output=True, text=True, timeout=180)
            records = [line for line in proc.stdout.splitlines() if line.startswith("r")]
            expect(sorted(records) == sorted(f"r{i}" for i in range(10)),
                   f"the group read {records} of the 10 records produced before it joined:\n"
                   f"{proc.stderr[-2000:]}")

        def delete_config():
            configs("--alter", "--entity-name", GROUP, "--delete-config",
                    "consumer.session.timeout.ms")
            out = describe()
            expect(entries(out) == [RESET], f"after --delete-config:\n{out}")

        def group_deleted():
            # The console consumer has left: the group is empty and can go.
            deadline = time.monotonic() + 60
            while True:
                proc = tool.run(SHARE, "--delete", "--group", GROUP, check=False)
                if proc.returncode == 0 and "Deletion of requested share groups" in proc.stdout:
                    break
                if time.monotonic() > deadline:
                    raise AssertionError(f"--delete:\n{proc.stdout}{proc.stderr}")
                time.sleep(1)
            out = describe()
            expect(entries(out) == [RESET], f"after the group's deletion:\n{out}")

        for name, fn in (("defaults", defaults), ("alter", alter), ("refusals", refusals),
                         ("effect", effect), ("delete_config", delete_config),
                         ("group_deleted", group_deleted)):
            step(name, fn)
    except AssertionError as e:
        failures += 1
        print(f"FAIL setup: {e}")
    finally:
        try:
            broker.stop()
        except AssertionError as e:
            print(f"group_configs: {e}", file=sys.stderr)
            failures += 1
    print(f"group_configs {args.target}: {failures} failed in "
          f"{time.monotonic() - started:.0f} s")
    if failures == 0:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"group_configs: logs kept in {work}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
