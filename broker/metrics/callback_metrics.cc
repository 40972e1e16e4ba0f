#include "broker/metrics/callback_metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

namespace spool::broker::metrics {

namespace {

class callback_metric : public prometheus::Collectable {
public:
    callback_metric(std::string name, std::string help, callback_kind kind,
                    std::function<double()> read)
        : _name(std::move(name)), _help(std::move(help)), _kind(kind), _read(std::move(read)) {}

    std::vector<prometheus::MetricFamily> Collect() const override {
        prometheus::MetricFamily f;
        f.name = _name;
        f.help = _help;
        prometheus::ClientMetric m;
        if (_kind == callback_kind::counter) {
            f.type = prometheus::MetricType::Counter;
            m.counter.value = _read();
        } else {
            f.type = prometheus::MetricType::Gauge;
            m.gauge.value = _read();
        }
        f.metric.push_back(std::move(m));
        return {std::move(f)};
    }

private:
    std::string _name;
    std::string _help;
    callback_kind _kind;
    std::function<double()> _read;
};

}  // namespace

void add_callback_metric(registry& reg, std::string name, std::string help, callback_kind kind,
                         std::function<double()> read) {
    if (!read)
        return;
    reg.own(
        std::make_shared<callback_metric>(std::move(name), std::move(help), kind, std::move(read)));
}

void export_net_counters(registry& reg, net_counter_source s) {
    add_callback_metric(reg, "spool_broker_active_connections", "Open Kafka client connections.",
                        callback_kind::gauge, std::move(s.connections_active));
    add_callback_metric(reg, "spool_broker_connections_total", "Kafka client connections accepted.",
                        callback_kind::counter, std::move(s.connections_accepted));
    add_callback_metric(reg, "spool_broker_malformed_requests_total",
                        "Kafka request frames refused as malformed (bad size, undecodable header "
                        "or body, unknown API or version).",
                        callback_kind::counter, std::move(s.malformed_requests));
    add_callback_metric(reg, "spool_broker_network_received_bytes_total",
                        "Bytes read from Kafka client connections.", callback_kind::counter,
                        std::move(s.bytes_received));
    add_callback_metric(reg, "spool_broker_network_sent_bytes_total",
                        "Bytes written to Kafka client connections.", callback_kind::counter,
                        std::move(s.bytes_sent));
}

void export_fetch_session_counters(registry& reg, fetch_session_counter_source s) {
    add_callback_metric(reg, "spool_broker_fetch_sessions",
                        "Incremental fetch sessions (KIP-227) in the cache.", callback_kind::gauge,
                        std::move(s.live));
    add_callback_metric(reg, "spool_broker_fetch_sessions_created_total",
                        "Incremental fetch sessions opened.", callback_kind::counter,
                        std::move(s.created));
    add_callback_metric(reg, "spool_broker_fetch_session_evictions_total",
                        "Incremental fetch sessions evicted to make room for a new one.",
                        callback_kind::counter, std::move(s.evicted));
    add_callback_metric(reg, "spool_broker_fetch_session_invalid_epoch_total",
                        "Fetches answered INVALID_FETCH_SESSION_EPOCH.", callback_kind::counter,
                        std::move(s.invalid_epoch));
    add_callback_metric(reg, "spool_broker_fetch_session_not_found_total",
                        "Fetches answered FETCH_SESSION_ID_NOT_FOUND.", callback_kind::counter,
                        std::move(s.not_found));
}

void export_transaction_metrics(registry& reg, transaction_source s) {
    add_callback_metric(reg, "spool_transactions_open",
                        "Transactions with records but no marker yet in the partitions this broker "
                        "leads.",
                        callback_kind::gauge, std::move(s.open_in_logs));
    add_callback_metric(reg, "spool_transactions_oldest_open_seconds",
                        "Seconds since the last write of the open transaction written longest ago "
                        "in the partitions this broker leads (0: none open). Past "
                        "transaction.max.timeout.ms the transaction is hanging.",
                        callback_kind::gauge, std::move(s.oldest_open_seconds));
    add_callback_metric(reg, "spool_transaction_coordinator_ongoing",
                        "Transactions this broker coordinates that are not complete yet.",
                        callback_kind::gauge, std::move(s.coordinator_ongoing));
    add_callback_metric(reg, "spool_transactions_committed_total",
                        "Transactions this broker coordinated to a commit.", callback_kind::counter,
                        std::move(s.committed));
    add_callback_metric(reg, "spool_transactions_aborted_total",
                        "Transactions this broker coordinated to an abort (by the producer, a "
                        "fencing InitProducerId or a timeout).",
                        callback_kind::counter, std::move(s.aborted));
    add_callback_metric(reg, "spool_transactions_timed_out_total",
                        "Transactions this broker aborted for running past their "
                        "transaction.timeout.ms.",
                        callback_kind::counter, std::move(s.timed_out));
}

}  // namespace spool::broker::metrics
