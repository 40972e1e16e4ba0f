#!/usr/bin/env python3
"""Checks that every alert in charts/spool/rules/spool.rules.yaml is complete and covered:

- severity label (critical|warning), summary, description and runbook_url annotations;
- runbook_url points at docs/runbook.md#<alertname in lower case>, and that section exists;
- tests/monitoring/rules_test.yaml has a promtool case where it fires and one where it does not;
- docs/runbook.md has no section for an alert that does not exist.

usage: check_rules.py <source dir>
"""
import re
import sys
from pathlib import Path

import yaml

src = Path(sys.argv[1])
rules = yaml.safe_load((src / "charts/spool/rules/spool.rules.yaml").read_text())
tests = yaml.safe_load((src / "tests/monitoring/rules_test.yaml").read_text())
runbook = (src / "docs/runbook.md").read_text()

failures = []
alerts = [r for g in rules["groups"] for r in g["rules"] if "alert" in r]
sections = set(re.findall(r"^## (Spool\w+)\s*$", runbook, re.M))
fires, quiet = set(), set()
for case in tests["tests"]:
    for t in case.get("alert_rule_test", []):
        (fires if t.get("exp_alerts") else quiet).add(t["alertname"])

for a in alerts:
    name = a["alert"]
    if a.get("labels", {}).get("severity") not in ("critical", "warning"):
        failures.append(f"{name}: severity must be critical or warning")
    ann = a.get("annotations", {})
    for key in ("summary", "description", "runbook_url"):
        if not ann.get(key):
            failures.append(f"{name}: no {key} annotation")
    want = f"docs/runbook.md#{name.lower()}"
    if not ann.get("runbook_url", "").endswith(want):
        failures.append(f"{name}: runbook_url should end with {want}")
    if name not in sections:
        failures.append(f"{name}: no '## {name}' section in docs/runbook.md")
    if name not in fires:
        failures.append(f"{name}: no promtool case where it fires")
    if name not in quiet:
        failures.append(f"{name}: no promtool case where it does not fire")

for s in sections - {a["alert"] for a in alerts}:
    failures.append(f"docs/runbook.md has a section for {s}, which is not an alert")

for f in failures:
    print("FAIL:", f)
print(f"{len(alerts)} alerts, {len(failures)} problems")
sys.exit(1 if failures or not alerts else 0)
