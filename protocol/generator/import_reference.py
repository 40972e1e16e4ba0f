#!/usr/bin/env python3
"""One-off importer: Apache Kafka message definitions (JSON with // comments) -> Spool schema files.

Run by hand, never by the build:

    python3 protocol/generator/import_reference.py /path/to/kafka-protocol protocol/schema

It keeps only the wire facts (names, types, version ranges, nullable/flexible/tagged versions and
non-trivial defaults) and drops comments, docs and license text. The output is committed; the build
reads only protocol/schema/. The format is described in protocol/schema/README.md.
"""

import json
import re
import sys
from pathlib import Path

# Which reference files to import, grouped into one schema file per API.
APIS = [
    "ApiVersions", "Metadata", "Produce", "Fetch", "ListOffsets", "OffsetForLeaderEpoch",
    "FindCoordinator", "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit",
    "OffsetFetch", "OffsetDelete", "ListGroups", "DescribeGroups", "DeleteGroups", "CreateTopics",
    "DeleteTopics", "CreatePartitions", "DeleteRecords", "DescribeConfigs", "AlterConfigs",
    "IncrementalAlterConfigs", "InitProducerId", "DescribeCluster", "DescribeLogDirs",
    "AlterPartitionReassignments", "ListPartitionReassignments", "ElectLeaders",
    "DescribeProducers", "SaslHandshake", "SaslAuthenticate", "AddPartitionsToTxn",
    "AddOffsetsToTxn", "EndTxn", "TxnOffsetCommit", "WriteTxnMarkers", "CreateAcls",
    "DescribeAcls", "DeleteAcls", "DescribeTransactions", "ListTransactions",
]
OTHERS = {
    "headers": ["RequestHeader", "ResponseHeader"],
    "consumer_protocol": ["ConsumerProtocolSubscription", "ConsumerProtocolAssignment"],
}


def snake(name):
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


def load(path):
    out = []
    for line in path.read_text().splitlines():
        # Strip // comments that are not inside a string literal.
        in_str = False
        cut = len(line)
        i = 0
        while i < len(line):
            c = line[i]
            if c == "\\" and in_str:
                i += 2
                continue
            if c == '"':
                in_str = not in_str
            elif not in_str and line.startswith("//", i):
                cut = i
                break
            i += 1
        out.append(line[:cut])
    return json.loads("\n".join(out))


def field_line(f, depth):
    parts = [f["name"], f["type"], "v=" + f["versions"]]
    if "nullableVersions" in f:
        parts.append("nullable=" + f["nullableVersions"])
    if "tag" in f:
        parts.append("tag=%d" % f["tag"])
        parts.append("tagged=" + f.get("taggedVersions", f["versions"]))
    if "flexibleVersions" in f:
        parts.append("flexible=" + f["flexibleVersions"])
    if "default" in f:
        d = f["default"]
        if isinstance(d, bool):
            d = "true" if d else "false"
        d = str(d)
        if d != "" and d != "0" and d != "false":
            parts.append("default=" + d)
    lines = ["  " * depth + " ".join(parts)]
    for sub in f.get("fields", []):
        lines += field_line(sub, depth + 1)
    return lines


def message_block(d):
    head = [d["type"], d["name"]]
    if "apiKey" in d:
        head.append("key=%d" % d["apiKey"])
    head.append("versions=" + d["validVersions"])
    head.append("flexible=" + d.get("flexibleVersions", "none"))
    lines = [" ".join(head)]
    for f in d["fields"]:
        lines += field_line(f, 1)
    for s in d.get("commonStructs", []):
        lines.append("  struct %s v=%s" % (s["name"], s["versions"]))
        for f in s["fields"]:
            lines += field_line(f, 2)
    return lines


def main():
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    dst.mkdir(parents=True, exist_ok=True)
    groups = {snake(a): [a + "Request", a + "Response"] for a in APIS}
    groups.update(OTHERS)
    for out_name, names in groups.items():
        lines = ["# Wire facts of Apache Kafka's %s definitions (AK 3.9)." % " and ".join(names),
                 "# Written by protocol/generator/import_reference.py; format in README.md.", ""]
        for n in names:
            lines += message_block(load(src / (n + ".json")))
            lines.append("")
        (dst / (out_name + ".schema")).write_text("\n".join(lines[:-1]) + "\n")


if __name__ == "__main__":
    main()
