#!/usr/bin/env python3
"""Writes the Grafana dashboards of charts/spool/dashboards/*.json from the panel lists below.

The JSON files are what the chart ships (templates/dashboards.yaml) and what
tests/monitoring/live_prometheus.py evaluates; run this after editing a panel and commit both.
Every broker query selects `namespace=~"$namespace",spool_cluster=~"$cluster"` and rates over
`$__rate_interval`; `$datasource`, `$namespace` (the brokers' Kubernetes namespace, the label
Prometheus' Kubernetes discovery adds) and `$cluster` (narrowed to the chosen namespaces) are
template variables.

usage: generate.py [out dir]  (default: rewrites the JSON files next to this script; the CTest
                              monitoring_rules checks the committed files are what it writes)
"""
import json
from pathlib import Path

C = 'namespace=~"$namespace",spool_cluster=~"$cluster"'
R = "$__rate_interval"
CLUSTERS = 'label_values(spool_broker_info{namespace=~"$namespace"}, spool_cluster)'


def row(title):
    """A Grafana row: a titled band; the panels after it belong to it."""
    return {"title": title, "type": "row", "unit": "short", "targets": []}


def panel(title, exprs, unit="short", kind="timeseries", legend=None):
    if isinstance(exprs, str):
        exprs = [(exprs, legend or "")]
    return {"title": title, "type": kind, "unit": unit, "targets": exprs}


DASHBOARDS = {
    "spool-cluster-overview": ("Spool / Cluster overview", [
        panel("Brokers up", f'sum(up{{spool_component="broker",{C}}})', kind="stat"),
        panel("Active controllers", f"sum(spool_controller_active{{{C}}})", kind="stat"),
        panel("Offline partitions", f"max(spool_cluster_offline_partitions{{{C}}})", kind="stat"),
        panel("Under min ISR", f"sum(spool_partition_under_min_isr{{{C}}}) or vector(0)", kind="stat"),
        panel("Under-replicated", f"sum(spool_partitions_under_replicated{{{C}}})", kind="stat"),
        panel("Topics / partitions", [(f"max(spool_cluster_topics{{{C}}})", "topics"),
                                      (f"max(spool_cluster_partitions{{{C}}})", "partitions")], kind="stat"),
        panel("Bytes in / out", [(f"sum(rate(spool_broker_bytes_in_total{{{C}}}[{R}]))", "in"),
                                 (f"sum(rate(spool_broker_bytes_out_total{{{C}}}[{R}]))", "out")], "Bps"),
        panel("Requests by API", f"sum by (api) (rate(spool_broker_requests_total{{{C}}}[{R}]))", "reqps", legend="{{api}}"),
        panel("Request error ratio", f"sum(rate(spool_broker_request_errors_total{{{C}}}[{R}])) / sum(rate(spool_broker_requests_total{{{C}}}[{R}]))", "percentunit"),
        panel("Produce / fetch p99", [
            (f'histogram_quantile(0.99, sum by (le) (rate(spool_broker_request_latency_seconds_bucket{{api="produce",{C}}}[{R}])))', "produce"),
            (f'histogram_quantile(0.99, sum by (le) (rate(spool_broker_request_latency_seconds_bucket{{api="fetch",{C}}}[{R}])))', "fetch")], "s"),
        panel("Consumer lag (total)", f"sum by (group) (spool_consumer_group_lag{{{C}}})", legend="{{group}}"),
        panel("Connections", f"sum(spool_broker_active_connections{{{C}}})"),
        # From every broker's metadata snapshot: per-partition series come from the partition's
        # leader (sum counts each once), the offline and imbalance gauges and elections from the
        # active controller (0 on the others).
        row("Replication"),
        panel("Under-replicated partitions", f"sum(spool_partitions_under_replicated{{{C}}})", legend="under-replicated"),
        panel("Under min ISR partitions", f"sum(spool_partition_under_min_isr{{{C}}}) or vector(0)", legend="under min ISR"),
        panel("Offline partitions", [(f"max(spool_cluster_offline_partitions{{{C}}})", "offline"),
                                     (f"max(spool_cluster_preferred_leader_imbalance{{{C}}})", "not on preferred leader")]),
        panel("ISR shrinks / expands", [(f"sum(rate(spool_partition_isr_shrinks_total{{{C}}}[{R}]))", "shrinks/s"),
                                        (f"sum(rate(spool_partition_isr_expands_total{{{C}}}[{R}]))", "expands/s")], "ops"),
        panel("Leader elections", f"sum(rate(spool_partition_leader_elections_total{{{C}}}[{R}]))", "ops", legend="elections/s"),
        panel("Leaders per broker", f"sum by (instance) (spool_partitions_leader{{{C}}})", legend="{{instance}}"),
        # The etcd metadata store's brokers (metadata.store=etcd); a single broker on the embedded
        # store serves none of these but the live brokers.
        row("Cluster metadata"),
        panel("Live brokers (metadata)", f"max(spool_cluster_brokers{{{C}}})", kind="stat"),
        panel("Sessions registered / may lead", [
            (f'sum(spool_broker_session_state{{state="registered",{C}}})', "registered"),
            (f"sum(spool_broker_session_may_lead{{{C}}})", "may lead")], kind="stat"),
        panel("Since etcd last answered", f"max(spool_etcd_last_response_age_seconds{{{C}}})", "s", kind="stat"),
        panel("Controller elections won (1h)", f"sum(increase(spool_controller_elections_won_total{{{C}}}[1h]))", kind="stat"),
        panel("etcd requests by outcome", f"sum by (outcome) (rate(spool_etcd_requests_total{{{C}}}[{R}]))", "reqps", legend="{{outcome}}"),
        panel("etcd request p99 by operation", f"histogram_quantile(0.99, sum by (operation, le) (rate(spool_etcd_request_duration_seconds_bucket{{{C}}}[{R}])))", "s", legend="{{operation}}"),
        panel("Applied metadata revision", f"max by (instance) (spool_metadata_applied_revision{{{C}}})", legend="{{instance}}"),
        panel("Watch events applied", f"sum by (instance) (rate(spool_metadata_watch_events_total{{{C}}}[{R}]))", "ops", legend="{{instance}}"),
        panel("Controller txns / compare failures", [
            (f"sum(rate(spool_controller_txns_total{{{C}}}[{R}]))", "committed"),
            (f"sum(rate(spool_controller_txn_compare_failures_total{{{C}}}[{R}]))", "compare failed")], "ops"),
        panel("Session re-registrations / metadata reloads", [
            (f"sum by (instance) (increase(spool_broker_session_reregistrations_total{{{C}}}[{R}]))", "{{instance}} re-registered"),
            (f"sum by (instance) (increase(spool_metadata_reloads_total{{{C}}}[{R}]))", "{{instance}} reloaded")]),
    ]),
    "spool-brokers": ("Spool / Brokers", [
        panel("Ready", f"spool_broker_ready{{{C}}}", legend="{{instance}}"),
        panel("Shard busy ratio", f'rate(spool_broker_thread_cpu_seconds_total{{thread=~"shard-.*",{C}}}[{R}])', "percentunit", legend="{{instance}} {{thread}}"),
        panel("Requests per broker", f"sum by (instance) (rate(spool_broker_requests_total{{{C}}}[{R}]))", "reqps", legend="{{instance}}"),
        panel("Request latency p99 by API", f"histogram_quantile(0.99, sum by (instance, api, le) (rate(spool_broker_request_latency_seconds_bucket{{{C}}}[{R}])))", "s", legend="{{instance}} {{api}}"),
        panel("Request queue time p99", f"histogram_quantile(0.99, sum by (instance, le) (rate(spool_broker_request_queue_time_seconds_bucket{{{C}}}[{R}])))", "s", legend="{{instance}}"),
        panel("Requests waiting (produce / fetch)", f'sum by (instance, api) (spool_broker_requests_in_flight{{api=~"produce|fetch",{C}}})', legend="{{instance}} {{api}}"),
        panel("Errors by API", f"sum by (api) (rate(spool_broker_request_errors_total{{{C}}}[{R}]))", "reqps", legend="{{api}}"),
        panel("Connections", [(f"spool_broker_active_connections{{{C}}}", "{{instance}} open"),
                              (f"rate(spool_broker_connections_total{{{C}}}[{R}])", "{{instance}} accepted/s")]),
        panel("Network bytes", [(f"rate(spool_broker_network_received_bytes_total{{{C}}}[{R}])", "{{instance}} received"),
                                (f"rate(spool_broker_network_sent_bytes_total{{{C}}}[{R}])", "{{instance}} sent")], "Bps"),
        panel("Malformed requests", f"rate(spool_broker_malformed_requests_total{{{C}}}[{R}])", "reqps", legend="{{instance}}"),
        panel("Partitions and leaders", [(f"spool_broker_partitions{{{C}}}", "{{instance}} replicas"),
                                         (f"spool_partitions_leader{{{C}}}", "{{instance}} leaders")]),
        panel("Uptime", f"time() - spool_broker_start_time_seconds{{{C}}}", "s", legend="{{instance}}"),
    ]),
    "spool-topics": ("Spool / Topics and partitions", [
        panel("Bytes in by topic", f"sum by (topic) (rate(spool_broker_bytes_in_total{{{C}}}[{R}]))", "Bps", legend="{{topic}}"),
        panel("Bytes out by topic", f"sum by (topic) (rate(spool_broker_bytes_out_total{{{C}}}[{R}]))", "Bps", legend="{{topic}}"),
        panel("Records in by topic", f"sum by (topic) (rate(spool_broker_records_in_total{{{C}}}[{R}]))", "short", legend="{{topic}}"),
        panel("Records out by topic", f"sum by (topic) (rate(spool_broker_records_out_total{{{C}}}[{R}]))", "short", legend="{{topic}}"),
        panel("Busiest partitions (end offset growth)", f"topk(10, rate(spool_log_end_offset{{{C}}}[{R}]))", legend="{{topic}}-{{partition}}"),
        row("Replication"),
        panel("Under-replicated partitions by topic", f"sum by (topic) (spool_partition_isr_size{{{C}}} < bool spool_partition_replicas{{{C}}})", legend="{{topic}}"),
        panel("Under min ISR partitions by topic", f"sum by (topic) (spool_partition_under_min_isr{{{C}}})", legend="{{topic}}"),
        panel("Smallest ISR / replicas by topic", [(f"min by (topic) (spool_partition_isr_size{{{C}}})", "{{topic}} ISR"),
                                                   (f"max by (topic) (spool_partition_replicas{{{C}}})", "{{topic}} replicas")]),
        panel("Offline partitions", f"max(spool_cluster_offline_partitions{{{C}}})", legend="offline"),
        panel("ISR shrinks / expands", [(f"sum(rate(spool_partition_isr_shrinks_total{{{C}}}[{R}]))", "shrinks/s"),
                                        (f"sum(rate(spool_partition_isr_expands_total{{{C}}}[{R}]))", "expands/s")], "ops"),
        panel("Leader elections", f"sum(rate(spool_partition_leader_elections_total{{{C}}}[{R}]))", "ops", legend="elections/s"),
        # Transactions: the logs' side from each partition's leader, the coordinators' from the
        # brokers leading __transaction_state partitions (sum counts each once).
        row("Transactions"),
        panel("Open transactions in logs", f"sum by (instance) (spool_transactions_open{{{C}}})", legend="{{instance}}"),
        panel("Oldest open transaction (hanging past 15 min)", f"max by (instance) (spool_transactions_oldest_open_seconds{{{C}}})", "s", legend="{{instance}}"),
        panel("Transactions ended", [(f"sum(rate(spool_transactions_committed_total{{{C}}}[{R}]))", "committed/s"),
                                     (f"sum(rate(spool_transactions_aborted_total{{{C}}}[{R}]))", "aborted/s"),
                                     (f"sum(rate(spool_transactions_timed_out_total{{{C}}}[{R}]))", "timed out/s")], "ops"),
        panel("Ongoing at coordinators", f"sum(spool_transaction_coordinator_ongoing{{{C}}})", legend="ongoing"),
    ]),
    "spool-consumer-groups": ("Spool / Consumer groups", [
        panel("Lag by group and topic", f"sum by (group, topic) (spool_consumer_group_lag{{{C}}})", legend="{{group}} {{topic}}"),
        panel("Lag by partition (top 20)", f"topk(20, spool_consumer_group_lag{{{C}}})", legend="{{group}} {{topic}}-{{partition}}"),
        panel("Lag growth", f"sum by (group) (deriv(spool_consumer_group_lag{{{C}}}[{R}]))", legend="{{group}}"),
        panel("Members", f"sum by (group) (spool_consumer_group_members{{{C}}})", legend="{{group}}"),
        panel("Rebalances", f"sum by (group) (increase(spool_consumer_group_rebalances_total{{{C}}}[{R}]))", legend="{{group}}"),
        panel("Groups", f"sum(spool_consumer_groups{{{C}}})", kind="stat"),
        panel("Fetch rate by topic", f"sum by (topic) (rate(spool_broker_records_out_total{{{C}}}[{R}]))", legend="{{topic}}"),
        # Share groups (KIP-932): from the brokers leading the partitions (sum counts each once).
        row("Share groups"),
        panel("Share-group lag", f"sum by (group, topic) (spool_share_group_lag{{{C}}})", legend="{{group}} {{topic}}"),
        panel("Deliveries / redeliveries", [(f"sum by (group) (rate(spool_share_group_deliveries_total{{{C}}}[{R}]))", "{{group}} deliveries/s"),
                                            (f"sum by (group) (rate(spool_share_group_redeliveries_total{{{C}}}[{R}]))", "{{group}} redeliveries/s")], "ops"),
        panel("Acknowledgements", f"sum by (group, type) (rate(spool_share_group_acknowledgements_total{{{C}}}[{R}]))", "ops", legend="{{group}} {{type}}"),
        panel("Archived unprocessed (rejected, delivery limit)", f"sum by (group, reason) (increase(spool_share_group_records_archived_total{{{C}}}[{R}]))", legend="{{group}} {{reason}}"),
        panel("Records locked / lock expiries", [(f"sum by (group) (spool_share_group_records_acquired{{{C}}})", "{{group}} locked"),
                                                 (f"sum by (group) (increase(spool_share_group_lock_expiries_total{{{C}}}[{R}]))", "{{group}} expiries")]),
    ]),
    "spool-storage": ("Spool / Storage", [
        panel("Log size by topic", f"sum by (topic) (spool_log_size_bytes{{{C}}})", "bytes", legend="{{topic}}"),
        panel("Segments by topic", f"sum by (topic) (spool_log_segments{{{C}}})", legend="{{topic}}"),
        panel("Log directory free", f"spool_storage_log_dir_free_bytes{{{C}}} / spool_storage_log_dir_capacity_bytes{{{C}}}", "percentunit", legend="{{instance}} {{dir}}"),
        panel("Free bytes in 6 h (predicted)", f"predict_linear(spool_storage_log_dir_free_bytes{{{C}}}[1h], 6 * 3600)", "bytes", legend="{{instance}}"),
        panel("fsync latency", [
            (f"histogram_quantile(0.5, sum by (instance, le) (rate(spool_storage_fsync_duration_seconds_bucket{{{C}}}[{R}])))", "{{instance}} p50"),
            (f"histogram_quantile(0.99, sum by (instance, le) (rate(spool_storage_fsync_duration_seconds_bucket{{{C}}}[{R}])))", "{{instance}} p99")], "s"),
        panel("fsyncs", f"rate(spool_storage_fsync_duration_seconds_count{{{C}}}[{R}])", "ops", legend="{{instance}}"),
        panel("Storage errors by operation", f"sum by (op) (rate(spool_storage_errors_total{{{C}}}[{R}]))", legend="{{op}}"),
        panel("Segments rolled", f"rate(spool_storage_segments_rolled_total{{{C}}}[{R}])", legend="{{instance}}"),
    ]),
    "spool-operator": ("Spool / Operator", [
        panel("Reconciles by result", f"sum by (controller, result) (rate(spool_operator_reconciles_total[{R}]))", "ops", legend="{{controller}} {{result}}"),
        panel("Reconcile errors", f"sum by (controller) (rate(spool_operator_reconcile_errors_total[{R}]))", "ops", legend="{{controller}}"),
        panel("Reconcile duration p99", f"histogram_quantile(0.99, sum by (controller, le) (rate(spool_operator_reconcile_duration_seconds_bucket[{R}])))", "s", legend="{{controller}}"),
        panel("Queue depth", "sum by (controller) (spool_operator_queue_depth)", legend="{{controller}}"),
        panel("Leader", "spool_operator_leader", legend="{{pod}}"),
        panel("Since last successful reconcile", "time() - max by (controller) (spool_operator_last_success_timestamp_seconds)", "s", legend="{{controller}}"),
        panel("Clusters ready", f'spool_operator_cluster_ready{{cluster=~"$cluster"}}', legend="{{namespace}}/{{cluster}}"),
        panel("Broker pods ready / wanted", [(f'spool_operator_cluster_ready_replicas{{cluster=~"$cluster"}}', "{{cluster}} ready"),
                                             (f'spool_operator_cluster_replicas{{cluster=~"$cluster"}}', "{{cluster}} wanted")]),
        panel("Rolling restart: pods pending", f'spool_operator_cluster_restart_pending{{cluster=~"$cluster"}}', legend="{{cluster}}"),
        panel("Scale-down blocked (drain)", f'spool_operator_cluster_scale_down_blocked{{cluster=~"$cluster"}}', legend="{{cluster}}"),
        panel("Topics not ready", "count by (namespace) (spool_operator_topic_ready == 0) or vector(0)", legend="{{namespace}}"),
    ]),
}


def grafana(uid, title, panels):
    ds = {"type": "prometheus", "uid": "${datasource}"}
    out = []
    top, first = 0, 0  # y of the current row's first panel, index of that panel
    for i, p in enumerate(panels):
        if p["type"] == "row":
            top = max((q["gridPos"]["y"] + q["gridPos"]["h"] for q in out), default=0)
            out.append({"id": i + 1, "title": p["title"], "type": "row", "collapsed": False,
                        "gridPos": {"x": 0, "y": top, "w": 24, "h": 1}, "panels": [],
                        "targets": []})
            top, first = top + 1, i + 1
            continue
        w = 6 if p["type"] == "stat" else 12
        per_row = 24 // w
        j = i - first
        out.append({
            "id": i + 1,
            "title": p["title"],
            "type": p["type"],
            "datasource": ds,
            "gridPos": {"x": (j % per_row) * w, "y": top + (j // 2) * 8, "w": w, "h": 8},
            "fieldConfig": {"defaults": {"unit": p["unit"]}, "overrides": []},
            "options": {},
            "targets": [{"refId": chr(ord("A") + j), "datasource": ds, "expr": e,
                         "legendFormat": legend} for j, (e, legend) in enumerate(p["targets"])],
        })
    return {
        "uid": uid,
        "title": title,
        "tags": ["spool"],
        "schemaVersion": 38,
        "version": 1,
        "editable": True,
        "time": {"from": "now-1h", "to": "now"},
        "refresh": "30s",
        "templating": {"list": [
            {"name": "datasource", "label": "Data source", "type": "datasource",
             "query": "prometheus", "current": {}, "hide": 0},
            {"name": "namespace", "label": "Namespace", "type": "query", "datasource": ds,
             "query": {"query": "label_values(spool_broker_info, namespace)", "refId": "namespace"},
             "definition": "label_values(spool_broker_info, namespace)",
             "includeAll": True, "allValue": ".*", "multi": True, "refresh": 2, "current": {}, "hide": 0},
            {"name": "cluster", "label": "Cluster", "type": "query", "datasource": ds,
             "query": {"query": CLUSTERS, "refId": "cluster"},
             "definition": CLUSTERS,
             "includeAll": True, "allValue": ".*", "multi": True, "refresh": 2, "current": {}, "hide": 0},
        ]},
        "panels": out,
    }


if __name__ == "__main__":
    import sys

    here = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    for uid, (title, panels) in DASHBOARDS.items():
        (here / f"{uid}.json").write_text(json.dumps(grafana(uid, title, panels), indent=2) + "\n")
