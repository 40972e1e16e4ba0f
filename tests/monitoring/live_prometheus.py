#!/usr/bin/env python3
"""CTest monitoring_live_prometheus (label monitoring): the shipped dashboards and alert rules
against a real Prometheus (Debian's prometheus, 127.0.0.1, temp dir, 1 s scrapes) scraping a real
spool-broker under real client traffic (kcat producing, a kcat group consumer keeping up):

1. healthy: every dashboard panel query returns data, every query and alert expression names
   only metrics the broker serves (the operator's from docs/metrics.md: the operator does not run
   here, so its dashboard's panels are checked for names and syntax, not data; the e2e test
   operator_monitoring.* in tests/e2e checks them for data against a real operator), and no alert
   fires;
2. a stalled consumer group (it reads once, then stops while the producer goes on) makes
   SpoolConsumerLagGrowing fire for that group, not for the one that keeps up;
3. a stopped broker makes SpoolBrokerDown fire.

The test's copy of the rules shortens every `for:` to 3 s, SpoolConsumerLagGrowing's to 20 s (the
shipped durations are minutes; the lag of a group that keeps up is a few records now and then,
so "growing" needs more than 3 s to mean something); expressions are unchanged. Bounded: about
90 s, every wait has a deadline.

usage: live_prometheus.py <spool-broker> <source dir>
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).parent))
import spool_fixture as fx  # noqa: E402

FOR_OVERRIDE = "3s"
FOR_OVERRIDES = {"SpoolConsumerLagGrowing": "20s"}
RATE_WINDOW = "15s"  # stands in for Grafana's $__rate_interval with 1 s scrapes
CLUSTER = "local"

failures = []


def fail(msg):
    print("FAIL:", msg, flush=True)
    failures.append(msg)


def scrape_labels(component):
    if component == "operator":
        return {"spool_component": "operator", "namespace": "spool-system"}
    return {"spool_cluster": CLUSTER, "spool_component": "broker", "namespace": "test"}


class Prometheus:
    """target_port: one port, or a list of them (brokers of one cluster)."""

    def __init__(self, workdir, target_port, rules, component="broker"):
        ports = target_port if isinstance(target_port, list) else [target_port]
        self.port = fx.free_port()
        self.workdir = workdir
        (Path(workdir) / "rules.yaml").write_text(yaml.safe_dump(rules, sort_keys=False))
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": ["rules.yaml"],
            "scrape_configs": [{
                "job_name": f"spool-{component}s",
                "scrape_timeout": "1s",
                # The operator's own namespace/cluster labels name the Cluster it reports on.
                "honor_labels": component == "operator",
                "static_configs": [{
                    "targets": [f"127.0.0.1:{p}" for p in ports],
                    # What the chart's ServiceMonitor/PodMonitor relabelings add in Kubernetes.
                    "labels": scrape_labels(component),
                }],
            }],
        }
        (Path(workdir) / "prometheus.yml").write_text(yaml.safe_dump(config))
        self.log = open(Path(workdir) / "prometheus.log", "w")
        self.proc = subprocess.Popen(
            [fx.need("prometheus"), f"--config.file={workdir}/prometheus.yml",
             f"--storage.tsdb.path={workdir}/tsdb", f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT, cwd=workdir)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                if fx.http_get(f"http://127.0.0.1:{self.port}/-/ready", 2)[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        raise SystemExit("FAIL: prometheus did not become ready\n" + self.log_tail())

    def api(self, path, **params):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            _, body = fx.http_get(url)
        except OSError as e:  # HTTP 400 for a bad query lands here
            body = getattr(e, "read", lambda: str(e).encode())().decode()
        return json.loads(body)

    def query(self, expr):
        return self.api("query", query=expr)

    def alerts(self, state="firing"):
        return [a for a in self.api("alerts")["data"]["alerts"] if a["state"] == state]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def log_tail(self):
        self.log.flush()
        return "".join(open(Path(self.workdir) / "prometheus.log").readlines()[-20:])


def wait_for(what, predicate, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            print(f"ok: {what}", flush=True)
            return True
        time.sleep(1)
    fail(f"{what}: not within {seconds} s")
    return False


def metric_names(expr):
    """Metric names an expression selects (PromQL functions and keywords filtered out)."""
    expr = re.sub(r'"[^"]*"', '""', expr)          # label values
    expr = re.sub(r"\{[^}]*\}", "{}", expr)          # label matchers
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    words = set(re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", expr))
    keywords = {"and", "or", "unless", "offset", "bool", "vector", "time", "inf", "nan",
                "s", "m", "h", "d"}
    return {w for w in words if w not in keywords and not re.fullmatch(r"\d+[smhd]?", w)}


def family_of(name, served):
    for suffix in ("_bucket", "_count", "_sum"):
        if name.endswith(suffix) and served.get(name[: -len(suffix)]) == "histogram":
            return name[: -len(suffix)]
    return name


def panel_queries(dashboards_dir):
    for path in sorted(Path(dashboards_dir).glob("*.json")):
        board = json.loads(path.read_text())
        for var in ("datasource", "namespace", "cluster"):
            if var not in [v["name"] for v in board["templating"]["list"]]:
                fail(f"{path.name}: no ${var} template variable")
        for panel in board["panels"]:
            for target in panel["targets"]:
                expr = target["expr"].replace("$__rate_interval", RATE_WINDOW)
                expr = expr.replace("$cluster", CLUSTER)
                # Every namespace ("All"): the local Prometheus scrapes without one.
                expr = expr.replace("$namespace", ".*")
                yield path.stem, panel["title"], expr


def check_names(where, expr, served, operator):
    for name in metric_names(expr):
        fam = family_of(name, served)
        if name == "up" or fam in served or name in operator or family_of(name, operator) in operator:
            continue
        fail(f"{where}: names {name}, which is not exported")


def main():
    binary, src = sys.argv[1], Path(sys.argv[2])
    fx.need("kcat")
    fx.need("prometheus")
    rules = yaml.safe_load((src / "charts/spool/rules/spool.rules.yaml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = FOR_OVERRIDES.get(rule.get("alert"), FOR_OVERRIDE)
    doc = (src / "docs/metrics.md").read_text()
    operator = {n: k for n, k in re.findall(
        r"^\| `(spool_operator_[a-z_]+)` \| (counter|gauge|histogram) \|", doc, re.M)}
    # Served only by brokers on the etcd store (docs/metrics.md "Broker: cluster metadata"; checked
    # against a real etcd by broker_controller_etcd_tests): this embedded broker has none, so the
    # panels and alerts that read only these are checked for names and syntax, not data.
    metadata = re.search(r"^## Broker: cluster metadata$(.*?)^## ", doc, re.M | re.S)
    if not metadata:
        fail("docs/metrics.md has no 'Broker: cluster metadata' section")
    cluster_only = {n: k for n, k in re.findall(
        r"^\| `(spool_[a-z_]+)` \| (counter|gauge|histogram) \|", metadata.group(1), re.M)}
    operator = {**operator, **cluster_only}
    # Served here, but with series only once a share group fetches (docs/metrics.md "Broker:
    # share groups"), which kcat cannot do: their panels are checked for names and syntax;
    # compat_share_groups checks the values against Kafka's KafkaShareConsumer's traffic.
    share = re.search(r"^## Broker: share groups$(.*?)^## ", doc, re.M | re.S)
    if not share:
        fail("docs/metrics.md has no 'Broker: share groups' section")
    no_data_ok = {**cluster_only, **{n: k for n, k in re.findall(
        r"^\| `(spool_[a-z_]+)` \| (counter|gauge|histogram) \|", share.group(1), re.M)}}

    with tempfile.TemporaryDirectory() as work:
        broker = fx.Broker(binary, work, overrides=[
            "num.partitions=3", "group.initial.rebalance.delay.ms=0",
            "log.flush.interval.messages=50"]).start()
        prom = Prometheus(work, broker.http_port, rules)
        stop = threading.Event()
        audit = None
        try:
            # Producer: 20 records every 0.5 s, at most 3 minutes.
            def produce():
                for i in range(360):
                    if stop.is_set():
                        return
                    try:
                        fx.produce(broker.bootstrap, "orders", 20, prefix=f"r{i}")
                    except SystemExit as e:
                        if not stop.is_set():
                            fail(f"producer: {e}")
                        return
                    time.sleep(0.5)

            producer = threading.Thread(target=produce, daemon=True)
            producer.start()
            time.sleep(2)  # the topic exists before the consumer joins
            # A consumer that keeps up, for the whole test (killed at the end).
            audit = subprocess.Popen(
                [fx.need("kcat"), "-b", broker.bootstrap, "-G", "audit", "orders", "-q",
                 "-X", "auto.offset.reset=earliest", "-X", "auto.commit.interval.ms=100"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            # The group that stalls: reads what is there once, commits, leaves.
            fx.consume_group(broker.bootstrap, "billing", "orders", 20)
            served = fx.metric_types(fx.http_get(broker.metrics_url)[1])

            wait_for("Prometheus scrapes the broker",
                     lambda: any(r["value"][1] == "1" for r in
                                 prom.query('up{spool_component="broker"}')["data"]["result"]), 30)
            time.sleep(int(RATE_WINDOW[:-1]) + 2)  # enough samples for every rate window

            # 1. Every panel returns data and names only exported metrics.
            panels = 0
            for board, title, expr in panel_queries(src / "charts/spool/dashboards"):
                panels += 1
                where = f"{board} / {title}"
                check_names(where, expr, served, operator)
                r = prom.query(expr)
                if r.get("status") != "success":
                    fail(f"{where}: {expr}: {r.get('error')}")
                elif board != "spool-operator" and not all(
                        family_of(n, no_data_ok) in no_data_ok for n in metric_names(expr)
                ) and not any(
                        x["value"][1] not in ("NaN", "+Inf", "-Inf") for x in r["data"]["result"]):
                    # NaN: a quantile or ratio over nothing (no fsync, no request) is no data.
                    fail(f"{where}: no data for {expr}: {r['data']['result']}")
            print(f"ok: {panels} panel queries evaluated", flush=True)
            alerts = [r for g in rules["groups"] for r in g["rules"] if "alert" in r]
            for a in alerts:
                check_names(a["alert"], a["expr"], served, operator)
                r = prom.query(a["expr"])
                if r.get("status") != "success":
                    fail(f"{a['alert']}: {r.get('error')}")
            print(f"ok: {len(alerts)} alert expressions evaluated", flush=True)
            firing = [a["labels"]["alertname"] + str(a["labels"]) for a in prom.alerts()
                      if a["labels"].get("group") != "billing"]
            if firing:
                fail(f"alerts firing on a healthy broker: {firing}")

            # 2. billing stalled while the producer goes on.
            def lag_alert(group):
                return [a for a in prom.alerts() if a["labels"]["alertname"] ==
                        "SpoolConsumerLagGrowing" and a["labels"].get("group") == group]
            wait_for("SpoolConsumerLagGrowing fires for the stalled group billing",
                     lambda: lag_alert("billing"), 60)
            if lag_alert("audit"):
                fail("SpoolConsumerLagGrowing fires for audit, which keeps up")

            # 3. The broker stops.
            stop.set()
            broker.stop()
            wait_for("SpoolBrokerDown fires after the broker stopped",
                     lambda: [a for a in prom.alerts()
                              if a["labels"]["alertname"] == "SpoolBrokerDown"], 30)
        finally:
            stop.set()
            if audit:
                audit.kill()
                audit.wait()
            broker.stop()
            prom.stop()
            if failures:
                print("--- broker log\n" + broker.log_tail() + "--- prometheus log\n" +
                      prom.log_tail())
    print(f"{len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
