#!/usr/bin/env python3
"""Authorization with Apache Kafka's own tools: kafka-acls (AclCommand 4.1.1) manages the ACLs,
TopicCommand creates topics, kcat (librdkafka) produces, consumes and lists metadata as
User:ANONYMOUS over PLAINTEXT. Starts and restarts its own broker (tests/fixtures/broker.sh) in a
temporary data directory: spool-broker, or with --target kafka Apache Kafka 4.1.1 itself
(tests/fixtures/start-kafka.sh, StandardAuthorizer), so the same bindings and the same requests
show Kafka's answers. Checks, each printed as PASS/FAIL:

  phase 1: authorizer on, super.users=User:ANONYMOUS (the caller may do everything)
    acls_add_and_list         --add literal, prefixed, deny, host and group bindings; --list
                              shows each with Kafka's names, --list --topic filters
  phase 2: restart, super.users=User:admin (the caller is judged by the bindings)
    acls_survive_restart      --list after the restart shows every binding
    produce_allowed_prefixed  Write through a PREFIXED allow
    produce_denied_deny_wins  a literal Deny beats the prefixed Allow: TOPIC_AUTHORIZATION_FAILED
    produce_denied_no_acl     a topic with bindings for another principal only
    metadata_hides_topics     listing all topics leaves out those not describable
    consume_allowed           Read on topic and group: kcat -G consumes and commits
    consume_group_denied      a group without bindings: GROUP_AUTHORIZATION_FAILED
    host_bindings             an Allow for 127.0.0.1 applies, one for another host does not
    acls_remove               --remove of the prefixed allow: Write refused from then on
  phase 3: restart without an authorizer
    security_disabled         kafka-acls --list fails with SECURITY_DISABLED; every topic open

    acl_compat.py [--target spool|kafka] [--bin SPOOL_BROKER] --kafka-dir DIR
        (DIR: the peer with libs/*.jar; --bin for the spool target)
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
BROKER_SH = os.path.join(ROOT, "tests", "fixtures", "broker.sh")
LOG4J = os.path.join(HERE, "..", "java", "log4j2.properties")
ACL_TOOL = "org.apache.kafka.tools.AclCommand"
TOPICS_TOOL = "org.apache.kafka.tools.TopicCommand"
STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


class Broker:
    def __init__(self, target, binary, data_dir):
        self.target = target
        self.binary = binary
        self.data_dir = data_dir
        self.bootstrap = None

    def start(self, *overrides):
        args = [BROKER_SH, "start", "--target", self.target, "--data-dir", self.data_dir]
        if self.target == "spool":
            args += ["--bin", self.binary]
        if self.bootstrap:  # the same port again: clients keep their address
            args += ["--port", self.bootstrap.rsplit(":", 1)[1]]
        for o in overrides:
            args += ["--override", o]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
        expect(proc.returncode == 0, f"broker start failed: {proc.stderr}")
        self.bootstrap = proc.stdout.strip().splitlines()[-1]

    def stop(self):
        proc = subprocess.run([BROKER_SH, "stop", "--target", self.target, "--data-dir",
                               self.data_dir], capture_output=True, text=True, timeout=120)
        expect(proc.returncode == 0, f"broker did not stop cleanly: {proc.stderr}")


class Tools:
    def __init__(self, broker, kafka_dir):
        self.broker = broker
        self.classpath = os.path.join(kafka_dir, "libs", "*")

    def run(self, main_class, *args, expect_ok=True):
        cmd = ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx256m",
               f"-Dlog4j2.configurationFile={LOG4J}", "-cp", self.classpath, main_class,
               "--bootstrap-server", self.broker.bootstrap, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
        if expect_ok and proc.returncode != 0:
            raise AssertionError(f"{main_class} {' '.join(args)} exited {proc.returncode}:\n"
                                 f"{proc.stdout}{proc.stderr}")
        return proc

    def acls(self, *args, expect_ok=True):
        return self.run(ACL_TOOL, *args, expect_ok=expect_ok)


def kcat(bootstrap, *args, stdin=None, timeout=90):
    return subprocess.run(["kcat", "-b", bootstrap, *args], input=stdin, capture_output=True,
                          text=True, timeout=timeout)


def produce(bootstrap, topic, payload="x"):
    """(ok, stderr) of producing one record with acks=all."""
    proc = kcat(bootstrap, "-P", "-t", topic, "-X", "acks=all",
                "-X", "topic.message.timeout.ms=20000", stdin=payload + "\n")
    text = proc.stderr
    ok = proc.returncode == 0 and "ERROR" not in text and "fail" not in text.lower()
    return ok, text


def expect_produce_ok(bootstrap, topic):
    ok, text = produce(bootstrap, topic)
    expect(ok, f"produce to {topic} failed:\n{text}")


def expect_produce_denied(bootstrap, topic):
    ok, text = produce(bootstrap, topic)
    expect(not ok and "Topic authorization failed" in text,
           f"produce to {topic} was not refused with TOPIC_AUTHORIZATION_FAILED:\n{text}")


def listed_topics(bootstrap):
    proc = kcat(bootstrap, "-L", "-J")
    expect(proc.returncode == 0, f"kcat -L failed: {proc.stderr}")
    import json
    return {t["topic"] for t in json.loads(proc.stdout)["topics"]}


def binding_lines(text):
    """The (principal, host, operation, permission) entries kafka-acls --list prints per resource."""
    out = {}
    resource = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Current ACLs for resource"):
            resource = line[line.index("`") + 1:line.rindex("`")]
            out[resource] = set()
        elif line.startswith("(principal=") and resource is not None:
            out[resource].add(line)
    return out


def entry(principal, host, operation, permission):
    return (f"(principal={principal}, host={host}, operation={operation}, "
            f"permissionType={permission})")


RESOURCES = {
    "ResourcePattern(resourceType=CLUSTER, name=kafka-cluster, patternType=LITERAL)": {
        entry("User:ANONYMOUS", "*", "ALTER", "ALLOW"),
        entry("User:ANONYMOUS", "*", "DESCRIBE", "ALLOW"),
        entry("User:ANONYMOUS", "*", "CREATE", "ALLOW"),
        entry("User:ANONYMOUS", "*", "CLUSTER_ACTION", "ALLOW")},
    "ResourcePattern(resourceType=TOPIC, name=acl-ok-, patternType=PREFIXED)": {
        entry("User:ANONYMOUS", "*", "WRITE", "ALLOW"),
        entry("User:ANONYMOUS", "*", "READ", "ALLOW")},
    "ResourcePattern(resourceType=TOPIC, name=acl-ok-denied, patternType=LITERAL)": {
        entry("User:ANONYMOUS", "*", "WRITE", "DENY")},
    "ResourcePattern(resourceType=TOPIC, name=acl-other, patternType=LITERAL)": {
        entry("User:alice", "*", "READ", "ALLOW")},
    "ResourcePattern(resourceType=TOPIC, name=acl-host-ok, patternType=LITERAL)": {
        entry("User:ANONYMOUS", "127.0.0.1", "WRITE", "ALLOW")},
    "ResourcePattern(resourceType=TOPIC, name=acl-host-other, patternType=LITERAL)": {
        entry("User:ANONYMOUS", "10.9.9.9", "WRITE", "ALLOW")},
    "ResourcePattern(resourceType=GROUP, name=acl-group, patternType=LITERAL)": {
        entry("User:ANONYMOUS", "*", "READ", "ALLOW")},
}
TOPICS = ["acl-ok-1", "acl-ok-denied", "acl-other", "acl-host-ok", "acl-host-other"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--target", choices=["spool", "kafka"], default="spool")
    parser.add_argument("--bin")
    parser.add_argument("--kafka-dir", required=True)
    args = parser.parse_args()
    for tool in ("kcat", "java"):
        if shutil.which(tool) is None:
            print(f"{tool} is not installed (scripts/setup.sh --with-tests)", file=sys.stderr)
            return 1
    if args.target == "spool" and not args.bin:
        print("--bin is required for the spool target", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix="spool-acls.")
    broker = Broker(args.target, args.bin, os.path.join(work, "broker"))
    tools = Tools(broker, args.kafka_dir)
    passed = failed = 0
    running = False

    def run(name, fn):
        nonlocal passed, failed
        started = time.monotonic()
        try:
            fn()
            print(f"PASS {name} ({time.monotonic() - started:.1f}s)", flush=True)
            passed += 1
        except Exception as e:  # noqa: BLE001 - report and continue with the next check
            print(f"FAIL {name}: {e}", flush=True)
            failed += 1

    try:
        # ---- phase 1: the caller is a super user ----
        broker.start(f"authorizer.class.name={STANDARD}", "super.users=User:ANONYMOUS")
        running = True
        b = broker.bootstrap
        for t in TOPICS:
            tools.run(TOPICS_TOOL, "--create", "--topic", t, "--partitions", "1",
                      "--replication-factor", "1")

        def add_and_list():
            # ClusterAction too: a Kafka node's own broker and controller talk as ANONYMOUS.
            tools.acls("--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Alter",
                       "--operation", "Describe", "--operation", "Create",
                       "--operation", "ClusterAction", "--cluster")
            tools.acls("--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Write",
                       "--operation", "Read", "--topic", "acl-ok-",
                       "--resource-pattern-type", "prefixed")
            tools.acls("--add", "--deny-principal", "User:ANONYMOUS", "--operation", "Write",
                       "--topic", "acl-ok-denied")
            tools.acls("--add", "--allow-principal", "User:alice", "--operation", "Read",
                       "--topic", "acl-other")
            tools.acls("--add", "--allow-principal", "User:ANONYMOUS", "--allow-host",
                       "127.0.0.1", "--operation", "Write", "--topic", "acl-host-ok")
            tools.acls("--add", "--allow-principal", "User:ANONYMOUS", "--allow-host",
                       "10.9.9.9", "--operation", "Write", "--topic", "acl-host-other")
            tools.acls("--add", "--allow-principal", "User:ANONYMOUS", "--operation", "Read",
                       "--group", "acl-group")
            listed = binding_lines(tools.acls("--list").stdout)
            expect(listed == RESOURCES, f"--list shows {listed}")
            one = binding_lines(tools.acls("--list", "--topic", "acl-ok-",
                                           "--resource-pattern-type", "prefixed").stdout)
            key = "ResourcePattern(resourceType=TOPIC, name=acl-ok-, patternType=PREFIXED)"
            expect(one == {key: RESOURCES[key]}, f"--list --topic acl-ok- prefixed shows {one}")
            # MATCH: every binding that applies to topic acl-ok-denied.
            match = binding_lines(tools.acls("--list", "--topic", "acl-ok-denied",
                                             "--resource-pattern-type", "match").stdout)
            expect(set(match) == {key, "ResourcePattern(resourceType=TOPIC, name=acl-ok-denied, "
                                       "patternType=LITERAL)"}, f"--list match shows {match}")

        run("acls_add_and_list", add_and_list)
        broker.stop()
        running = False

        # ---- phase 2: the caller is judged by the bindings ----
        broker.start(f"authorizer.class.name={STANDARD}", "super.users=User:admin")
        running = True
        b = broker.bootstrap

        def survive_restart():
            listed = binding_lines(tools.acls("--list").stdout)
            expect(listed == RESOURCES, f"--list after the restart shows {listed}")

        run("acls_survive_restart", survive_restart)
        run("produce_allowed_prefixed", lambda: expect_produce_ok(b, "acl-ok-1"))
        run("produce_denied_deny_wins", lambda: expect_produce_denied(b, "acl-ok-denied"))
        run("produce_denied_no_acl", lambda: expect_produce_denied(b, "acl-other"))

        def metadata_hides():
            topics = listed_topics(b)
            want = {"acl-ok-1", "acl-ok-denied", "acl-host-ok"}
            expect(want <= topics, f"kcat -L lists {sorted(topics)}, missing some of {want}")
            expect(not ({"acl-other", "acl-host-other"} & topics),
                   f"kcat -L lists topics the caller may not describe: {sorted(topics)}")

        run("metadata_hides_topics", metadata_hides)

        def consume_allowed():
            expect_produce_ok(b, "acl-ok-1")
            proc = kcat(b, "-G", "acl-group", "acl-ok-1", "-c", "2", "-f", "%s\n", "-u",
                        "-X", "auto.offset.reset=earliest", "-X", "session.timeout.ms=6000",
                        "-X", "heartbeat.interval.ms=500")
            expect(proc.returncode == 0 and proc.stdout.split() == ["x", "x"],
                   f"kcat -G acl-group exited {proc.returncode}: {proc.stdout!r} "
                   f"{proc.stderr[-2000:]}")

        run("consume_allowed", consume_allowed)

        def consume_group_denied():
            proc = kcat(b, "-G", "other-group", "acl-ok-1", "-c", "1", "-e",
                        "-X", "auto.offset.reset=earliest", "-X", "session.timeout.ms=6000",
                        timeout=60)
            expect(proc.returncode != 0 and "Group authorization failed" in proc.stderr,
                   f"kcat -G other-group was not refused with GROUP_AUTHORIZATION_FAILED: "
                   f"{proc.returncode} {proc.stderr[-2000:]}")

        run("consume_group_denied", consume_group_denied)

        def host_bindings():
            expect_produce_ok(b, "acl-host-ok")
            expect_produce_denied(b, "acl-host-other")

        run("host_bindings", host_bindings)

        def remove():
            tools.acls("--remove", "--force", "--allow-principal", "User:ANONYMOUS",
                       "--operation", "Write", "--topic", "acl-ok-",
                       "--resource-pattern-type", "prefixed")
            key = "ResourcePattern(resourceType=TOPIC, name=acl-ok-, patternType=PREFIXED)"
            listed = binding_lines(tools.acls("--list").stdout)
            expect(listed.get(key) == {entry("User:ANONYMOUS", "*", "READ", "ALLOW")},
                   f"after --remove: {listed.get(key)}")
            expect_produce_denied(b, "acl-ok-1")

        run("acls_remove", remove)
        broker.stop()
        running = False

        # ---- phase 3: no authorizer ----
        broker.start()
        running = True
        b = broker.bootstrap

        def security_disabled():
            proc = tools.acls("--list", expect_ok=False)
            text = proc.stdout + proc.stderr
            expect("SecurityDisabledException" in text or "No Authorizer is configured" in text,
                   f"kafka-acls --list without an authorizer:\n{text}")
            expect_produce_ok(b, "acl-other")
            expect_produce_ok(b, "acl-ok-denied")

        run("security_disabled", security_disabled)
    except Exception as e:  # noqa: BLE001 - a setup step failed: report it as a failure
        print(f"FAIL setup: {e}", flush=True)
        failed += 1
    finally:
        if running:
            try:
                broker.stop()
            except Exception as e:  # noqa: BLE001
                print(f"FAIL stop: {e}", flush=True)
                failed += 1
        if failed:
            log = os.path.join(work, "broker", f"{args.target}.log")
            if os.path.exists(log):
                print("---- last lines of spool.log ----")
                with open(log, encoding="utf-8", errors="replace") as f:
                    print("".join(f.readlines()[-60:]))
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"acl_compat: {passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
