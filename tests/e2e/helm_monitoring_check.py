#!/usr/bin/env python3
"""Checks helm-rendered monitoring objects (tests/e2e/helm_monitoring_test.sh render):

  check_render.py SRC RENDERED_DIR

RENDERED_DIR holds helm template output for: off.yaml (monitoring enabled, no
monitoring.coreos.com API), api.yaml (enabled, API present), forced.yaml (enabled with force,
no API), disabled.yaml (API present, nothing enabled).
"""
import json
import sys
from pathlib import Path

import yaml

src, rendered = Path(sys.argv[1]), Path(sys.argv[2])
failures = []


def fail(msg):
    print("FAIL:", msg)
    failures.append(msg)


def objects(name):
    return [o for o in yaml.safe_load_all((rendered / name).read_text()) if o]


def monitoring(objs):
    return sorted((o["kind"], o["metadata"]["name"]) for o in objs
                  if o["apiVersion"].startswith("monitoring.coreos.com/"))


want = [("PodMonitor", "r-operator"), ("PodMonitor", "r-operator-brokers"),
        ("PrometheusRule", "r-operator"), ("ServiceMonitor", "r-operator"),
        ("ServiceMonitor", "r-operator-brokers")]
for name, expected in (("off.yaml", []), ("api.yaml", want), ("forced.yaml", want),
                       ("disabled.yaml", [])):
    got = monitoring(objects(name))
    if got != expected:
        fail(f"{name}: monitoring objects {got}, want {expected}")
    else:
        print(f"ok: {name}: {len(got)} monitoring objects")

objs = {(o["kind"], o["metadata"]["name"]): o for o in objects("api.yaml")}

# The PrometheusRule is the plain rules file, group for group.
rules = yaml.safe_load((src / "charts/spool/rules/spool.rules.yaml").read_text())
if objs[("PrometheusRule", "r-operator")]["spec"] != rules:
    fail("PrometheusRule spec differs from charts/spool/rules/spool.rules.yaml")
else:
    print(f"ok: PrometheusRule holds the {sum(len(g['rules']) for g in rules['groups'])} rules")

# One ConfigMap per dashboard, labelled for Grafana's sidecar, holding the JSON file.
boards = sorted((src / "charts/spool/dashboards").glob("*.json"))
maps = [o for o in objects("api.yaml") if o["kind"] == "ConfigMap"
        and o["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]
if len(maps) != len(boards) or len(boards) < 6:
    fail(f"{len(maps)} dashboard ConfigMaps for {len(boards)} dashboards")
for b in boards:
    found = [m for m in maps if b.name in m.get("data", {})]
    if not found or json.loads(found[0]["data"][b.name]) != json.loads(b.read_text()):
        fail(f"no ConfigMap holds {b.name} unchanged")
print(f"ok: {len(maps)} dashboard ConfigMaps")

# The broker monitors select what the operator's builders label (golden manifests).
golden = json.loads((src / "operator/builders/testdata/minimal.golden.json").read_text())
manifests = golden if isinstance(golden, list) else golden.get("items", list(golden.values()))
services = [m for m in manifests if m.get("kind") == "Service"]
sts = [m for m in manifests if m.get("kind") == "StatefulSet"][0]
sm = objs[("ServiceMonitor", "r-operator-brokers")]["spec"]
selected = [s for s in services
            if sm["selector"]["matchLabels"].items() <= s["metadata"]["labels"].items()]
if [s["metadata"]["name"] for s in selected] != ["demo-brokers"]:
    fail(f"broker ServiceMonitor selects {[s['metadata']['name'] for s in selected]}, want the headless Service")
elif sm["endpoints"][0]["port"] not in [p["name"] for p in selected[0]["spec"]["ports"]]:
    fail("broker ServiceMonitor port is not a port of the headless Service")
pm = objs[("PodMonitor", "r-operator-brokers")]["spec"]
tmpl = sts["spec"]["template"]
if not pm["selector"]["matchLabels"].items() <= tmpl["metadata"]["labels"].items():
    fail("broker PodMonitor does not select the StatefulSet's pods")
ports = {p["name"]: p["containerPort"] for p in tmpl["spec"]["containers"][0]["ports"]}
ann = tmpl["metadata"]["annotations"]
if pm["podMetricsEndpoints"][0]["port"] not in ports:
    fail("broker PodMonitor port is not a container port")
if ann.get("prometheus.io/scrape") != "true" or ann.get("prometheus.io/port") != str(ports.get("http")) \
        or ann.get("prometheus.io/path") != "/metrics":
    fail(f"broker pod prometheus.io annotations wrong: {ann}")
print("ok: broker monitors and annotations match the builders' Service, pods and ports")

values = yaml.safe_load((src / "charts/spool/values.yaml").read_text())
if "serviceMonitor" in values.get("metrics", {}):
    fail("the dead metrics.serviceMonitor value is back")

print(f"{len(failures)} problems")
sys.exit(1 if failures else 0)
