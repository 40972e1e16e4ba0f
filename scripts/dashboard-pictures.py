#!/usr/bin/python3
"""Draws docs/img/<dashboard>.png: every panel of each shipped Grafana dashboard
(charts/spool/dashboards/*.json), plotted from Prometheus range queries over a real run, so a
reader sees what a healthy and a failing Spool look like before installing.

Broker dashboards (about 4 minutes): Debian's etcd and three spool-brokers on it
(metadata.store=etcd) on 127.0.0.1, scraped by Debian's prometheus every second; kcat produces
to "orders" (3 partitions, one led by each broker) and two consumer groups read it. Then, in the
phases shaded on every panel:
  orange  the group "billing" stops consuming while "audit" keeps up, and a topic "payments"
          with min.insync.replicas=2 is created and produced to with acks=all: its partitions
          are under min ISR (their ISR is one broker: replication.factor is 1 until #16 lands);
  red     a broker that is not the controller stops: SpoolBrokerDown, its partitions go offline
          once its etcd session expires (the controller's offline gauge), consumers of them stall;
  green   it comes back: the controller elects it leader again (leader elections).

Operator dashboard (about 2 minutes): a throwaway control plane (scripts/k8s/start.sh: etcd +
kube-apiserver, no kubelet, so broker pods are never ready), the real spool-operator reconciling a
Cluster "local" and a Topic, Debian's prometheus scraping the operator; orange: the Cluster is
scaled from 1 to 3 brokers and a Topic naming a missing Cluster is created; red: the operator
stops.

usage: dashboard-pictures.py <spool-broker> [--operator <spool-operator>] [--only broker|operator]
                             [out dir, default docs/img]
needs: python3-matplotlib, python3-yaml, prometheus, etcd, kcat, java + Kafka tools (peer cache);
       for the operator: the control plane (scripts/k8s/build.sh) and kubectl
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import yaml  # noqa: E402

SRC = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(SRC / "tests/monitoring"))
import live_prometheus as lp  # noqa: E402
import spool_fixture as fx  # noqa: E402

HEALTHY_S, FAILING_S, DOWN_S, BACK_S = 60, 60, 45, 35
OP_CALM_S, OP_CHANGE_S, OP_DOWN_S = 40, 60, 20
SHADES = {"failing": "tab:orange", "down": "tab:red", "back": "tab:green"}


def kafka_tool(cls, *args):
    libs = Path.home() / ".cache/spool/kafka-4.1.1/libs"
    subprocess.run(["java", "-cp", f"{libs}/*", cls, *args], check=True, capture_output=True,
                   timeout=120)


def start_etcd(work):
    client, peer = fx.free_port(), fx.free_port()
    url, peer_url = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
    proc = subprocess.Popen(
        [fx.need("etcd"), "--name", "pictures", "--data-dir", f"{work}/etcd",
         "--listen-client-urls", url, "--advertise-client-urls", url,
         "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
         "--initial-cluster", f"pictures={peer_url}", "--unsafe-no-fsync"],
        stdout=open(f"{work}/etcd.log", "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            if b"true" in urllib.request.urlopen(f"{url}/health", timeout=2).read():
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("FAIL: etcd did not start")


def controller_active(broker):
    try:
        text = fx.http_get(broker.metrics_url, 5)[1]
    except OSError:
        return False
    return any(line == "spool_controller_active 1" for line in text.splitlines())


def broker_run(binary, out):
    rules = yaml.safe_load((SRC / "charts/spool/rules/spool.rules.yaml").read_text())
    with tempfile.TemporaryDirectory() as work:
        etcd, etcd_url = start_etcd(work)
        brokers, consumers = [], []
        stop = threading.Event()
        prom = None
        try:
            for i in range(3):  # one at a time: broker 0 campaigns first and is the controller
                os.makedirs(f"{work}/broker-{i}")
                brokers.append(fx.Broker(binary, f"{work}/broker-{i}", overrides=[
                    f"node.id={i}", "metadata.store=etcd", f"etcd.endpoints={etcd_url}",
                    "etcd.prefix=/spool/pictures", "num.partitions=3",
                    "group.initial.rebalance.delay.ms=0", "log.flush.interval.messages=50",
                    "log.segment.bytes=1048576"]).start())
            bootstrap = ",".join(b.bootstrap for b in brokers)
            prom = lp.Prometheus(work, [b.http_port for b in brokers], rules)

            def produce(topic, acks):
                for i in range(2000):
                    if stop.is_set():
                        return
                    try:
                        fx.kcat("-P", "-b", bootstrap, "-t", topic, "-X", f"acks={acks}",
                                "-X", "message.timeout.ms=2000",
                                stdin="".join(f"{topic}-{i}-{j} {'x' * 200}\n"
                                              for j in range(50)).encode())
                    except SystemExit:
                        pass  # a partition offline or under min ISR: these produces fail
                    time.sleep(0.3)

            kafka_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
                       "--create", "--topic", "orders", "--partitions", "3")
            start = time.time()
            threading.Thread(target=produce, args=("orders", "1"), daemon=True).start()
            time.sleep(2)
            for group in ("audit", "billing"):
                consumers.append(subprocess.Popen(
                    ["kcat", "-b", bootstrap, "-G", group, "orders", "-q",
                     "-X", "auto.offset.reset=earliest", "-X", "auto.commit.interval.ms=1000"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(HEALTHY_S)
            failing_at = time.time()
            consumers[1].terminate()  # billing's consumer stops; its group keeps its offsets
            kafka_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", bootstrap,
                       "--create", "--topic", "payments", "--partitions", "3",
                       "--config", "min.insync.replicas=2")
            threading.Thread(target=produce, args=("payments", "all"), daemon=True).start()
            time.sleep(FAILING_S)
            down_at = time.time()
            victim = next(b for b in reversed(brokers) if not controller_active(b))
            victim.stop()
            time.sleep(DOWN_S)
            back_at = time.time()
            victim.restart()
            time.sleep(BACK_S)
            end = time.time()
            phases = [(failing_at, down_at, "failing"), (down_at, back_at, "down"),
                      (back_at, end, "back")]
            title = ("healthy, then failing (orange: stalled group billing, under-min-ISR topic "
                     "payments), a broker stopped (red), back (green)")
            for path in sorted((SRC / "charts/spool/dashboards").glob("*.json")):
                if path.stem != "spool-operator":
                    draw(prom, json.loads(path.read_text()), start, end, phases, title,
                         out / f"{path.stem}.png")
        finally:
            stop.set()
            for c in consumers:
                c.kill()
            for b in brokers:
                b.stop()
            if prom:
                prom.stop()
            etcd.terminate()
            etcd.wait(20)


def kubectl_binary():
    pinned = Path("/usr/lib/google-cloud-sdk/bin/kubectl.1.33")
    return str(pinned) if pinned.exists() else fx.need("kubectl")


def operator_run(operator, out):
    rules = yaml.safe_load((SRC / "charts/spool/rules/spool.rules.yaml").read_text())
    kubectl = kubectl_binary()
    with tempfile.TemporaryDirectory() as work:
        k8s = f"{work}/k8s"
        subprocess.run([str(SRC / "scripts/k8s/start.sh"), k8s], check=True, timeout=180)
        op, prom = None, None
        try:
            kc = [kubectl, "--kubeconfig", f"{k8s}/kubeconfig"]

            def apply(manifest):
                subprocess.run(kc + ["apply", "--server-side", "-f", "-"], check=True,
                               input=json.dumps(manifest).encode(), capture_output=True,
                               timeout=60)

            subprocess.run(kc + ["apply", "--server-side", "-f", str(SRC / "crds")], check=True,
                           capture_output=True, timeout=60)
            subprocess.run(kc + ["wait", "--for", "condition=established", "--timeout=60s",
                                 "crd/clusters.spool.dev", "crd/topics.spool.dev"],
                           check=True, capture_output=True, timeout=90)
            subprocess.run(kc + ["create", "namespace", "pictures"], check=True,
                           capture_output=True, timeout=60)
            port = fx.free_port()
            op = subprocess.Popen([operator, "--kubeconfig", f"{k8s}/kubeconfig", "--namespace",
                                   "pictures", "--metrics-port", str(port)],
                                  stdout=open(f"{work}/operator.log", "w"),
                                  stderr=subprocess.STDOUT)
            prom = lp.Prometheus(work, port, rules, component="operator")
            start = time.time()
            # Named as live_prometheus.CLUSTER, which draw() substitutes for $cluster.
            apply({"apiVersion": "spool.dev/v1alpha1", "kind": "Cluster",
                   "metadata": {"name": lp.CLUSTER, "namespace": "pictures"},
                   "spec": {"replicas": 1}})
            time.sleep(OP_CALM_S)
            changing_at = time.time()
            subprocess.run(kc + ["-n", "pictures", "scale", f"cluster/{lp.CLUSTER}",
                                 "--replicas=3"], check=True, capture_output=True, timeout=60)
            apply({"apiVersion": "spool.dev/v1alpha1", "kind": "Topic",
                   "metadata": {"name": "orders", "namespace": "pictures"},
                   "spec": {"clusterRef": {"name": "missing"}, "topicName": "orders",
                            "partitions": 3}})
            time.sleep(OP_CHANGE_S)
            down_at = time.time()
            op.terminate()
            op.wait(30)
            time.sleep(OP_DOWN_S)
            end = time.time()
            board = json.loads((SRC / "charts/spool/dashboards/spool-operator.json").read_text())
            draw(prom, board, start, end, [(changing_at, down_at, "failing"),
                                           (down_at, end, "down")],
                 "Cluster created, then scaled 1 -> 3 with no kubelet to run the pods and a Topic "
                 "naming a missing Cluster (orange), then the operator stopped (red)",
                 out / "spool-operator.png")
        finally:
            if op and op.poll() is None:
                op.kill()
            if prom:
                prom.stop()
            subprocess.run([str(SRC / "scripts/k8s/stop.sh"), k8s], timeout=60)


def draw(prom, board, start, end, phases, title, path):
    panels = [p for p in board["panels"] if p["type"] != "row"]  # rows are headings only
    cols = 3
    rows = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(cols * 5.2, rows * 2.8), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, panel in zip(axes.flat, panels):
        for target in panel["targets"]:
            expr = target["expr"].replace("$__rate_interval", "15s").replace("$cluster", lp.CLUSTER).replace("$namespace", ".*")
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
        for t0, t1, kind in phases:
            ax.axvspan(t0 - start, t1 - start, color=SHADES[kind], alpha=0.12)
        ax.set_title(panel["title"], fontsize=9)
        ax.tick_params(labelsize=7)
        unit = panel["fieldConfig"]["defaults"].get("unit", "")
        ax.set_xlabel(f"seconds  ({unit})" if unit not in ("", "short") else "seconds", fontsize=7)
        if ax.get_legend_handles_labels()[1]:
            ax.legend(fontsize=6, loc="upper left")
    fig.suptitle(f"{board['title']} — {title}", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"wrote {path}", flush=True)


def main():
    args = sys.argv[1:]
    if not args:
        raise SystemExit(__doc__)
    binary, operator, only, out = args.pop(0), None, None, SRC / "docs/img"
    while args:
        a = args.pop(0)
        if a == "--operator":
            operator = args.pop(0)
        elif a == "--only":
            only = args.pop(0)
        else:
            out = Path(a)
    out.mkdir(parents=True, exist_ok=True)
    if only in (None, "broker"):
        broker_run(binary, out)
    if only in (None, "operator"):
        if not operator:
            raise SystemExit("FAIL: the operator dashboard needs --operator <spool-operator>")
        operator_run(shutil.which(operator) or operator, out)


if __name__ == "__main__":
    main()
