#include "broker/txn/txn_service.h"

#include "broker/txn/errc.h"
#include "broker/txn/txn_hash.h"

#include <algorithm>

namespace spool::broker::txn {

namespace asio = boost::asio;

txn_service_config txn_service_config_from(const config::broker_config& broker) {
    txn_service_config c;
    c.partitions = broker.get(config::keys::transaction_state_log_num_partitions);
    c.replication_factor =
        static_cast<int16_t>(broker.get(config::keys::transaction_state_log_replication_factor));
    c.min_isr = broker.get(config::keys::transaction_state_log_min_isr);
    c.segment_bytes = broker.get(config::keys::transaction_state_log_segment_bytes);
    coordinator::set_broker_keys(c, broker);
    c.txn.max_timeout_ms =
        static_cast<int32_t>(broker.get(config::keys::transaction_max_timeout_ms).count());
    c.txn.id_expiration_ms = broker.get(config::keys::transactional_id_expiration_ms).count();
    c.txn.abort_check_interval_ms =
        broker.get(config::keys::transaction_abort_timed_out_transaction_cleanup_interval_ms)
            .count();
    c.txn.expire_check_interval_ms =
        broker.get(config::keys::transaction_remove_expired_transaction_cleanup_interval_ms)
            .count();
    return c;
}

namespace {

coordinator::partition_host_names host_names() {
    return {{std::string(transaction_state_topic), "txn"},
            std::string(config::keys::transaction_state_log_num_partitions.name),
            "the transactions of",
            make_error_code(errc::coordinator_not_available),
            make_error_code(errc::not_coordinator)};
}

}  // namespace

txn_service::txn_service(metadata::store& store, cluster::partition_manager& partitions,
                         txn_service_config config, const coordinator::clock& clk,
                         marker_sender& markers)
    : _config(std::move(config)),
      _clock(clk),
      _markers(markers),
      _host(store, partitions, host_names(), _config, clk, make_hooks()) {}

int32_t txn_service::partition_for(std::string_view transactional_id) const {
    return txn_partition_for(transactional_id, _config.partitions);
}

txn_service::host::hooks txn_service::make_hooks() {
    host::hooks h;
    h.open = [this](host::slot& s) {
        s.coordinator =
            std::make_unique<txn_coordinator>(s.partition, _config.txn, _clock, *s.log, _markers);
        s.coordinator->set_counters(&_counters);
        s.extra.timer = std::make_unique<asio::steady_timer>(s.executor);
    };
    h.load = [this](host::slot& s, int32_t epoch) {
        if (auto ec = s.coordinator->load(epoch)) {
            return ec;
        }
        rearm(s);
        return std::error_code{};
    };
    h.unloading = [](host::slot& s) {
        if (s.extra.timer) {
            s.extra.timer->cancel();
            s.extra.armed.reset();
        }
    };
    h.after_call = [this](host::slot& s) { rearm(s); };
    return h;
}

void txn_service::rearm(host::slot& s) {
    deadline_timer& t = s.extra;
    if (!s.coordinator || !t.timer || !s.coordinator->loaded()) {
        return;
    }
    auto next = s.coordinator->next_deadline();
    if (!next || (t.armed && *t.armed <= *next)) {
        return;
    }
    t.armed = *next;
    t.timer->expires_after(std::max(time_ms(0), *next - _clock.now()));
    t.timer->async_wait([this, &s](boost::system::error_code ec) {
        if (ec) {
            return;
        }
        s.extra.armed.reset();
        if (s.coordinator) {
            s.coordinator->poll();
        }
        rearm(s);
    });
}

}  // namespace spool::broker::txn
