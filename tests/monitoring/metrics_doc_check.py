#!/usr/bin/env python3
"""CTest monitoring_metrics_doc (label monitoring): docs/metrics.md lists exactly the metric
families a live spool-broker serves on /metrics after real client traffic (kcat produces,
consumes in a group and commits), with the documented type. The operator's table is checked by
operator_app_tests.

usage: metrics_doc_check.py <spool-broker> <source dir>
"""
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import spool_fixture as fx  # noqa: E402


def documented(doc):
    # The cluster metadata table is served only on the etcd store; broker_controller_etcd_tests
    # checks it against a real etcd.
    doc = re.sub(r"^## Broker: cluster metadata$.*?(?=^## )", "", doc, flags=re.M | re.S)
    rows = re.findall(r"^\| `(spool_[a-z_]+)` \| (counter|gauge|histogram) \|", doc, re.M)
    return {name: kind for name, kind in rows if not name.startswith("spool_operator_")}


def main():
    binary, src = sys.argv[1], Path(sys.argv[2])
    fx.need("kcat")
    doc = documented((src / "docs/metrics.md").read_text())
    with tempfile.TemporaryDirectory() as work:
        broker = fx.Broker(binary, work).start()
        try:
            fx.produce(broker.bootstrap, "doc-check", 50)
            fx.consume_group(broker.bootstrap, "doc-check-group", "doc-check", 50)
            status, text = fx.http_get(broker.metrics_url)
        finally:
            broker.stop()
    served = {n: k for n, k in fx.metric_types(text).items() if n.startswith("spool_")}
    failures = []
    for name, kind in sorted(served.items()):
        if name not in doc:
            failures.append(f"{name} ({kind}) is served but not in docs/metrics.md")
        elif doc[name] != kind:
            failures.append(f"{name}: served as {kind}, documented as {doc[name]}")
    for name in sorted(set(doc) - set(served)):
        failures.append(f"{name} is in docs/metrics.md but not served")
    other = sorted(n for n in fx.metric_types(text) if not n.startswith("spool_"))
    if other:
        failures.append(f"families outside the spool_ namespace: {other}")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(served)} families served, {len(doc)} documented, {len(failures)} problems")
    return 1 if failures or status != 200 or len(served) < 40 else 0


if __name__ == "__main__":
    sys.exit(main())
