#!/usr/bin/python3
"""Draws docs/img/<dashboard>.png: every panel of each shipped Grafana dashboard
(charts/spool/dashboards/*.json), plotted from Prometheus range queries over a real run, so a
reader sees what a healthy and a failing Spool look like before installing.

The run (about 3 minutes): a spool-broker and Debian's prometheus on 127.0.0.1 (1 s scrapes),
kcat producing to "orders" and two consumer groups reading it; then, in the shaded "failing"
part, the group "billing" stops consuming while "audit" keeps up, and a topic "payments" with
min.insync.replicas=2 (more than one broker can give) is created and produced to with acks=all
(its partitions are under min ISR; Kafka would refuse those produces with NOT_ENOUGH_REPLICAS,
Spool today accepts them); finally the broker stops (no data, SpoolBrokerDown fires).
The operator dashboard needs a running operator and is not drawn.

usage: dashboard-pictures.py <spool-broker> [out dir, default docs/img]
needs: python3-matplotlib, python3-yaml, prometheus, kcat, java + Kafka tools (peer cache)
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import yaml  # noqa: E402

SRC = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SRC / "tests/monitoring"))
import live_prometheus as lp  # noqa: E402
import spool_fixture as fx  # noqa: E402

HEALTHY_S, FAILING_S, DOWN_S = 70, 70, 20


def kafka_tool(cls, *args):
    libs = Path.home() / ".cache/spool/kafka-4.1.1/libs"
    subprocess.run(["java", "-cp", f"{libs}/*", cls, *args], check=True, capture_output=True,
                   timeout=120)


def main():
    binary = sys.argv[1]
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else SRC / "docs/img"
    out.mkdir(parents=True, exist_ok=True)
    rules = yaml.safe_load((SRC / "charts/spool/rules/spool.rules.yaml").read_text())
    with tempfile.TemporaryDirectory() as work:
        broker = fx.Broker(binary, work, overrides=[
            "num.partitions=3", "group.initial.rebalance.delay.ms=0",
            "log.flush.interval.messages=50", "log.segment.bytes=1048576"]).start()
        prom = lp.Prometheus(work, broker.http_port, rules)
        stop = threading.Event()
        consumers = []

        def produce(topic, acks):
            for i in range(1000):
                if stop.is_set():
                    return
                try:
                    fx.kcat("-P", "-b", broker.bootstrap, "-t", topic, "-X", f"acks={acks}",
                            "-X", "message.timeout.ms=2000",
                            stdin="".join(f"{topic}-{i}-{j} {'x' * 200}\n" for j in range(50)).encode())
                except SystemExit:
                    pass  # payments: every produce fails, which is the point
                time.sleep(0.3)

        try:
            start = time.time()
            threading.Thread(target=produce, args=("orders", "1"), daemon=True).start()
            time.sleep(2)
            for group in ("audit", "billing"):
                consumers.append(subprocess.Popen(
                    ["kcat", "-b", broker.bootstrap, "-G", group, "orders", "-q",
                     "-X", "auto.offset.reset=earliest", "-X", "auto.commit.interval.ms=1000"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(HEALTHY_S)
            failing_at = time.time()
            consumers[1].terminate()  # billing's consumer stops; its group keeps its offsets
            kafka_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
                       broker.bootstrap, "--create", "--topic", "payments", "--partitions", "3",
                       "--config", "min.insync.replicas=2")
            threading.Thread(target=produce, args=("payments", "all"), daemon=True).start()
            time.sleep(FAILING_S)
            down_at = time.time()
            stop.set()
            broker.stop()
            time.sleep(DOWN_S)
            end = time.time()
            for path in sorted((SRC / "charts/spool/dashboards").glob("*.json")):
                if path.stem == "spool-operator":
                    continue
                draw(prom, json.loads(path.read_text()), start, failing_at, down_at, end,
                     out / f"{path.stem}.png")
        finally:
            stop.set()
            for c in consumers:
                c.kill()
            broker.stop()
            prom.stop()


def draw(prom, board, start, failing_at, down_at, end, path):
    panels = [p for p in board["panels"] if p["type"] != "row"]  # rows are headings only
    cols = 3
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 5.2, rows * 2.8), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, panel in zip(axes.flat, panels):
        for target in panel["targets"]:
            expr = target["expr"].replace("$__rate_interval", "15s").replace("$cluster", lp.CLUSTER)
            r = prom.api("query_range", query=expr, start=start, end=end, step=2)
            result = r.get("data", {}).get("result", [])
            # The 8 largest series: a panel over every API would not fit a legend.
            result.sort(key=lambda s: -max((float(v) for _, v in s["values"]
                                            if v not in ("NaN", "+Inf", "-Inf")), default=0))
            for series in result[:8]:
                xs = [float(t) - start for t, _ in series["values"]]
                ys = [float(v) for _, v in series["values"]]
                label = target.get("legendFormat") or ""
                for k, v in series["metric"].items():
                    label = label.replace("{{" + k + "}}", v)
                ax.plot(xs, ys, linewidth=1.2, label=label[:40] or None)
        ax.axvspan(failing_at - start, down_at - start, color="tab:orange", alpha=0.12)
        ax.axvspan(down_at - start, end - start, color="tab:red", alpha=0.12)
        ax.set_title(panel["title"], fontsize=9)
        ax.tick_params(labelsize=7)
        unit = panel["fieldConfig"]["defaults"].get("unit", "")
        ax.set_xlabel(f"seconds  ({unit})" if unit not in ("", "short") else "seconds", fontsize=7)
        if ax.get_legend_handles_labels()[1]:
            ax.legend(fontsize=6, loc="upper left")
    fig.suptitle(f"{board['title']} — healthy, then failing (orange: stalled group billing, "
                 "under-min-ISR topic payments), then broker stopped (red)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
