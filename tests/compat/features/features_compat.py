#!/usr/bin/env python3
"""Feature levels with Apache Kafka's own tools (docs/upgrades.md): kafka-features
(FeatureCommand, Kafka 4.4.0's jars) describes, upgrades and downgrades metadata.version and
transaction.version on one broker, and FeaturesProbe.java (Kafka's Admin client) shows which
exception, so which error code, each refusal carries. The same plan runs on spool-broker or,
with --target kafka, on Apache Kafka 4.4.0 (tests/fixtures/start-kafka.sh, one KRaft node), the
reference: every check's expected text is what both print. Each check prints PASS or FAIL; the
exit status is the number of failures.

  describe_levels         metadata.version finalized at 4.4-IV2 (level 33, what a new cluster
                          bootstraps at), supported up to 4.4-IV2; transaction.version 2
  downgrade_refused       downgrade --metadata 4.4-IV1: "Unsupported metadata.version downgrade
                          from 33 to 32. Refusing to perform the requested downgrade because it
                          might delete metadata information.", InvalidUpdateVersionException
  unsafe_downgrade_refused  the same with --unsafe: "Unsafe metadata downgrade is not supported"
  beyond_supported        upgrade --feature metadata.version=34: "Invalid update version 34 for
                          feature metadata.version." (who says it differs: Kafka's controller,
                          Spool's broker), InvalidUpdateVersionException
  upgrade_to_same_level   upgrade --metadata 4.4-IV2: "metadata.version was upgraded to 33."
  upgrade_type_needed     upgrade --feature metadata.version=32: "Can't downgrade the version of
                          this feature without setting the upgrade type ..."
  dry_run                 upgrade --feature metadata.version=33 --dry-run: "can be upgraded"
  transaction_version     downgrade --feature transaction.version=1, describe shows 1, 3 is
                          refused, upgrade back to 2, describe shows 2
  unknown_feature         upgrade --feature foo.version=1: "does not support this feature"
  spool only:
  refuses_unsupported_level  the broker stopped, its stored metadata.version set to 34 (a level
                          this binary does not support): spool-broker exits with status 5 and
                          logs "refusing to start: the cluster's metadata.version is 34"

    features_compat.py [--target spool|kafka] [--bin SPOOL_BROKER] --kafka-dir DIR
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "acls"))
from acl_compat import LOG4J, Broker  # noqa: E402  (the same broker fixture wrapper)

FEATURES_TOOL = "org.apache.kafka.tools.FeatureCommand"
PROBE_SRC = os.path.join(HERE, "FeaturesProbe.java")


class Tools:
    def __init__(self, broker, kafka_dir):
        self.broker = broker
        self.classpath = os.path.join(kafka_dir, "libs", "*")

    def java(self, *args, timeout=180):
        cmd = ["java", "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx256m",
               f"-Dlog4j2.configurationFile={LOG4J}", "-cp", self.classpath, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return proc.returncode, proc.stdout + proc.stderr

    def features(self, *args):
        return self.java(FEATURES_TOOL, "--bootstrap-server", self.broker.bootstrap, *args)

    def probe(self, feature, level, kind):
        rc, out = self.java(PROBE_SRC, self.broker.bootstrap, feature, str(level), kind)
        if rc != 0:
            raise AssertionError(f"FeaturesProbe exited {rc}: {out}")
        return out.strip().splitlines()[-1]


def describe(tools):
    rc, out = tools.features("describe")
    if rc != 0:
        raise AssertionError(f"describe exited {rc}: {out}")
    levels = {}
    for line in out.splitlines():
        m = re.match(r"Feature: (\S+)\s+SupportedMinVersion: (\S+)\s+SupportedMaxVersion: (\S+)"
                     r"\s+FinalizedVersionLevel: (\S+)\s+Epoch: (\S+)", line)
        if m:
            levels[m.group(1)] = m.groups()[1:]
    return levels, out


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def expect_refused(tools, args, text):
    rc, out = tools.features(*args)
    expect(rc != 0, f"kafka-features {' '.join(args)} succeeded: {out}")
    expect(text in out, f"kafka-features {' '.join(args)}: expected '{text}' in:\n{out}")
    return out


def expect_done(tools, args, text):
    rc, out = tools.features(*args)
    expect(rc == 0 and text in out,
           f"kafka-features {' '.join(args)} exited {rc}, expected '{text}' in:\n{out}")


def run_checks(target, tools, broker, binary):
    failures = 0

    def check(name, fn):
        nonlocal failures
        try:
            detail = fn()
            print(f"PASS {name}" + (f": {detail}" if detail else ""), flush=True)
        except AssertionError as e:
            failures += 1
            print(f"FAIL {name}: {e}", flush=True)

    def describe_levels():
        levels, out = describe(tools)
        mv = levels.get("metadata.version")
        expect(mv is not None, f"no metadata.version in describe:\n{out}")
        expect(mv[1] == "4.4-IV2" and mv[2] == "4.4-IV2",
               f"metadata.version max/finalized {mv[1]}/{mv[2]}, expected 4.4-IV2:\n{out}")
        tv = levels.get("transaction.version")
        expect(tv is not None and tv[2] == "2", f"transaction.version not finalized at 2:\n{out}")
        return f"metadata.version {mv[0]}..{mv[1]} finalized {mv[2]}, transaction.version {tv[2]}"

    def downgrade_refused():
        expect_refused(tools, ["downgrade", "--metadata", "4.4-IV1"],
                       "Unsupported metadata.version downgrade from 33 to 32. Refusing to perform "
                       "the requested downgrade because it might delete metadata information.")
        got = tools.probe("metadata.version", 32, "safe")
        expect(got.startswith("InvalidUpdateVersionException: "), got)
        return got.split(":")[0]

    def unsafe_downgrade_refused():
        expect_refused(tools, ["downgrade", "--metadata", "4.4-IV1", "--unsafe"],
                       "Unsupported metadata.version downgrade from 33 to 32. Unsafe metadata "
                       "downgrade is not supported in this version.")
        got = tools.probe("metadata.version", 32, "unsafe")
        expect(got.startswith("InvalidUpdateVersionException: "), got)
        return got.split(":")[0]

    def beyond_supported():
        out = expect_refused(tools, ["upgrade", "--feature", "metadata.version=34"],
                             "Invalid update version 34 for feature metadata.version.")
        expect("only supports versions" in out, out)
        got = tools.probe("metadata.version", 34, "upgrade")
        expect(got.startswith("InvalidUpdateVersionException: "), got)
        return got.split(":")[0]

    def upgrade_to_same_level():
        expect_done(tools, ["upgrade", "--metadata", "4.4-IV2"],
                    "metadata.version was upgraded to 33.")

    def upgrade_type_needed():
        expect_refused(tools, ["upgrade", "--feature", "metadata.version=32"],
                       "Can't downgrade the version of this feature without setting the upgrade "
                       "type to either safe or unsafe downgrade.")

    def dry_run():
        expect_done(tools, ["upgrade", "--feature", "metadata.version=33", "--dry-run"],
                    "metadata.version can be upgraded to 33.")

    def transaction_version():
        expect_done(tools, ["downgrade", "--feature", "transaction.version=1"],
                    "transaction.version was downgraded to 1.")
        levels, out = describe(tools)
        expect(levels["transaction.version"][2] == "1", f"after the downgrade:\n{out}")
        epoch_after_down = int(levels["transaction.version"][3])
        expect_refused(tools, ["upgrade", "--feature", "transaction.version=3"],
                       "Invalid update version 3 for feature transaction.version.")
        expect_done(tools, ["upgrade", "--feature", "transaction.version=2"],
                    "transaction.version was upgraded to 2.")
        levels, out = describe(tools)
        expect(levels["transaction.version"][2] == "2", f"after the upgrade:\n{out}")
        expect(int(levels["transaction.version"][3]) > epoch_after_down,
               f"the epoch did not grow:\n{out}")
        return "2 -> 1 -> 2, 3 refused, epoch grew"

    def unknown_feature():
        expect_refused(tools, ["upgrade", "--feature", "foo.version=1"],
                       "does not support this feature.")

    check("describe_levels", describe_levels)
    check("downgrade_refused", downgrade_refused)
    check("unsafe_downgrade_refused", unsafe_downgrade_refused)
    check("beyond_supported", beyond_supported)
    check("upgrade_to_same_level", upgrade_to_same_level)
    check("upgrade_type_needed", upgrade_type_needed)
    check("dry_run", dry_run)
    check("transaction_version", transaction_version)
    check("unknown_feature", unknown_feature)

    if target == "spool":
        def refuses_unsupported_level():
            broker.stop()
            logs = os.path.join(broker.data_dir, "logs")
            snap = os.path.join(logs, "spool-metadata.yaml")
            with open(snap) as f:
                text = f.read()
            expect("metadata.version: 33" in text, f"no stored metadata.version in {snap}")
            with open(snap, "w") as f:
                f.write(text.replace("metadata.version: 33", "metadata.version: 34"))
            proc = subprocess.run(
                [binary, "--override", "listeners=PLAINTEXT://127.0.0.1:0",
                 "--override", f"log.dirs={logs}", "--override", "http.listener=127.0.0.1:0"],
                capture_output=True, text=True, timeout=60)
            out = proc.stdout + proc.stderr
            expect(proc.returncode == 5, f"exit status {proc.returncode}, expected 5:\n{out}")
            line = next((l for l in out.splitlines() if "refusing to start" in l), "")
            expect("the cluster's metadata.version is 34" in line, f"no refusal line:\n{out}")
            return f"exit 5, '{line.split('refusing to start: ')[1][:60]}...'"

        check("refuses_unsupported_level", refuses_unsupported_level)
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", choices=["spool", "kafka"], default="spool")
    ap.add_argument("--bin")
    ap.add_argument("--kafka-dir", required=True)
    a = ap.parse_args()
    if a.target == "spool" and not a.bin:
        ap.error("--bin is required for the spool target")
    if shutil.which("java") is None:
        print("FAIL setup: java is not installed (scripts/setup.sh --with-tests)")
        return 1
    work = tempfile.mkdtemp(prefix="features-compat-")
    broker = Broker(a.target, a.bin, os.path.join(work, "broker"))
    try:
        broker.start()
        failures = run_checks(a.target, Tools(broker, a.kafka_dir), broker, a.bin)
    finally:
        try:
            broker.stop()
        except AssertionError:
            pass  # stopped by a check already
        shutil.rmtree(work, ignore_errors=True)
    print(f"{a.target}: {failures} failure(s)")
    return failures


if __name__ == "__main__":
    sys.exit(main())
