#!/usr/bin/env python3
"""The operator dashboard and alerts against a real Prometheus scraping a real spool-operator.

Run by the e2e test operator_monitoring.test_operator_dashboard_panels_return_data_from_prometheus
(monitoring_test.cc), which starts the operator against the real control plane and creates a
Cluster named like live_prometheus.CLUSTER, so that $cluster selects it. This starts Debian's
prometheus (127.0.0.1, temp dir, 1 s scrapes, with the chart's rules loaded) on the operator's
metrics endpoint, then:

1. every panel query of the spool-operator dashboard returns data (template variables substituted
   as live_prometheus.py does; NaN/Inf is no data);
2. every alert expression of the spool-operator rule group evaluates, and Prometheus reports the
   loaded rules healthy.

Bounded: about 15 s, every wait has a deadline.

usage: operator_dashboard_check.py <operator metrics host:port> <source dir> <command>

<command> (a shell command) changes the Cluster once Prometheus scrapes: the Cluster reconciler
is event-driven, so an idle operator has no reconcile inside a rate window (the p99 panel is NaN
then, rightly).
"""
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(sys.argv[2]) / "tests/monitoring"))
import live_prometheus as lp  # noqa: E402

BOARD = "spool-operator"
GROUP = "spool-operator"


def has_data(result):
    return any(x["value"][1] not in ("NaN", "+Inf", "-Inf") for x in result["data"]["result"])


def main():
    target, src, change = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    port = int(target.rsplit(":", 1)[1])
    rules = yaml.safe_load((src / "charts/spool/rules/spool.rules.yaml").read_text())
    alerts = [r for g in rules["groups"] if g["name"] == GROUP for r in g["rules"] if "alert" in r]
    if not alerts:
        lp.fail(f"no alerts in the {GROUP} rule group")
    panels = [(title, expr) for board, title, expr in lp.panel_queries(src / "charts/spool/dashboards")
              if board == BOARD]
    if not panels:
        lp.fail(f"no panels in the {BOARD} dashboard")

    with tempfile.TemporaryDirectory() as work:
        prom = lp.Prometheus(work, port, rules, component="operator")
        try:
            lp.wait_for("Prometheus scrapes the operator",
                        lambda: any(r["value"][1] == "1" for r in prom.query(
                            'up{spool_component="operator"}')["data"]["result"]), 20)
            changed = subprocess.run(change, shell=True, capture_output=True, text=True)
            if changed.returncode != 0:
                lp.fail(f"{change}: {changed.stdout}{changed.stderr}")
            time.sleep(5)  # the reconcile it causes, and scrapes after it, inside the rate window

            for title, expr in panels:
                r = prom.query(expr)
                if r.get("status") != "success":
                    lp.fail(f"{BOARD} / {title}: {expr}: {r.get('error')}")
                elif not has_data(r):
                    lp.fail(f"{BOARD} / {title}: no data for {expr}: {r['data']['result']}")
            print(f"ok: {len(panels)} operator panel queries evaluated", flush=True)

            for a in alerts:
                r = prom.query(a["expr"])
                if r.get("status") != "success":
                    lp.fail(f"{a['alert']}: {r.get('error')}")
            print(f"ok: {len(alerts)} operator alert expressions evaluated", flush=True)
            loaded = {r["name"]: r for g in prom.api("rules")["data"]["groups"]
                      if g["name"] == GROUP for r in g["rules"]}
            for a in alerts:
                rule = loaded.get(a["alert"])
                if rule is None:
                    lp.fail(f"{a['alert']}: not loaded by Prometheus")
                elif rule.get("health") != "ok":
                    lp.fail(f"{a['alert']}: {rule.get('health')}: {rule.get('lastError')}")
        finally:
            prom.stop()
            if lp.failures:
                print("--- prometheus log\n" + prom.log_tail())
    print(f"{len(lp.failures)} problems")
    return 1 if lp.failures else 0


if __name__ == "__main__":
    sys.exit(main())
