#include "broker/coordinator/coordinator_service.h"

#include "broker/coordinator/group_hash.h"
#include "broker/metrics/group_probe.h"
#include "broker/net/shard_pool.h"
#include "common/log.h"

#include <boost/asio/use_future.hpp>

namespace spool::broker::coordinator {

namespace asio = boost::asio;

namespace {

class probe_listener final : public group_listener {
public:
    explicit probe_listener(metrics::group_probe& probe) : _probe(probe) {}
    void rebalance_completed(std::string_view group) override { _probe.rebalance_completed(group); }
    void group_removed(std::string_view group) override { _probe.forget(group); }

private:
    metrics::group_probe& _probe;
};

}  // namespace

service_config service_config_from(const config::broker_config& broker) {
    service_config c;
    c.partitions = static_cast<int32_t>(broker.get_int("offsets.topic.num.partitions"));
    c.replication_factor = static_cast<int16_t>(broker.get_int("offsets.topic.replication.factor"));
    c.segment_bytes = broker.get_int("offsets.topic.segment.bytes");
    c.node_id = static_cast<int32_t>(broker.node_id());
    auto& g = c.coordinator;
    g.offsets_retention_ms = broker.get_int("offsets.retention.minutes") * 60 * 1000;
    g.retention_check_interval_ms = broker.get_int("offsets.retention.check.interval.ms");
    g.max_metadata_bytes = static_cast<int32_t>(broker.get_int("offset.metadata.max.bytes"));
    g.initial_rebalance_delay_ms =
        static_cast<int32_t>(broker.get_int("group.initial.rebalance.delay.ms"));
    g.min_session_timeout_ms = static_cast<int32_t>(broker.get_int("group.min.session.timeout.ms"));
    g.max_session_timeout_ms = static_cast<int32_t>(broker.get_int("group.max.session.timeout.ms"));
    g.max_group_size = static_cast<int32_t>(broker.get_int("group.max.size"));
    return c;
}

coordinator_service::coordinator_service(metadata::store& store,
                                         metadata::partition_manager& partitions,
                                         service_config config, const clock& clk,
                                         metrics::group_probe* probe)
    : _store(store), _partitions(partitions), _config(config), _clock(clk) {
    if (probe) {
        _listener = std::make_unique<probe_listener>(*probe);
    }
    _slots.resize(static_cast<size_t>(_config.partitions));
}

coordinator_service::~coordinator_service() = default;

int32_t coordinator_service::partition_for(std::string_view group_id) const {
    return offsets_partition_for(group_id, _config.partitions);
}

asio::awaitable<std::error_code> coordinator_service::ensure_topic() {
    auto snap = _store.snapshot();
    const metadata::topic_metadata* existing = snap->find(offsets_topic);
    metadata::topic_metadata topic;
    if (existing) {
        topic = *existing;
        if (static_cast<int32_t>(topic.partitions.size()) != _config.partitions) {
            // Kafka refuses to start with a different count: groups would move partitions.
            log::get("coordinator")
                ->error("{} has {} partitions but offsets.topic.num.partitions is {}",
                        offsets_topic, topic.partitions.size(), _config.partitions);
            co_return make_error_code(errc::coordinator_not_available);
        }
    } else {
        metadata::new_topic t;
        t.name = std::string(offsets_topic);
        t.partitions = _config.partitions;
        t.replication_factor = _config.replication_factor;
        t.configs = {{"cleanup.policy", "compact"},
                     {"segment.bytes", std::to_string(_config.segment_bytes)}};
        auto create = _store.create_topic(t);
        auto created = co_await std::move(create);
        if (!created) {
            co_return created.error();
        }
        topic = std::move(created.value());
    }
    co_return co_await _partitions.ensure_topic(std::move(topic));
}

asio::awaitable<std::error_code> coordinator_service::start() {
    if (auto ec = co_await ensure_topic()) {
        co_return ec;
    }
    for (int32_t p = 0; p < _config.partitions; ++p) {
        auto s = std::make_unique<slot>();
        s->partition = p;
        model::topic_partition tp{std::string(offsets_topic), model::partition_id{p}};
        s->executor = _partitions.pool().executor(_partitions.shard_of(tp));
        _slots[static_cast<size_t>(p)] = std::move(s);
    }
    for (auto& s : _slots) {
        auto ec = co_await net::run_on(s->executor, load_on_shard(this, s.get()));
        if (ec) {
            co_return ec;
        }
    }
    _started.store(true, std::memory_order_release);
    co_return std::error_code{};
}

std::error_code coordinator_service::start_blocking() {
    auto f = asio::co_spawn(_partitions.pool().executor(0), start(), asio::use_future);
    return f.get();
}

void coordinator_service::stop_blocking() {
    asio::co_spawn(_partitions.pool().executor(0), stop(), asio::use_future).get();
}

asio::awaitable<std::error_code> coordinator_service::load_on_shard(coordinator_service* self,
                                                                    slot* s) {
    model::topic_partition tp{std::string(offsets_topic), model::partition_id{s->partition}};
    if (self->_partitions.local(tp) == nullptr) {
        co_return make_error_code(errc::not_coordinator);
    }
    // Looked up again at every use, never kept: partition_manager owns the log and may free it
    // (topic deletion, close_all) while this coordinator lives (see partition_group_log.h).
    metadata::partition_manager* partitions = &self->_partitions;
    s->log = std::make_unique<partition_group_log>(
        [partitions, tp] { return partitions->local(tp); }, self->_clock);
    auto c = std::make_unique<group_coordinator>(s->partition, self->_config.coordinator,
                                                 self->_clock, *s->log, self->_listener.get());
    if (auto ec = c->load()) {
        log::get("coordinator")->error("loading {} failed: {}", tp.dir_name(), ec.message());
        co_return ec;
    }
    s->coordinator = std::move(c);
    s->timer = std::make_unique<asio::steady_timer>(s->executor);
    self->rearm(*s);
    co_return std::error_code{};
}

asio::awaitable<void> coordinator_service::stop() {
    _started.store(false, std::memory_order_release);
    for (auto& s : _slots) {
        if (s) {
            co_await net::run_on(s->executor, unload_on_shard(s.get()));
        }
    }
}

asio::awaitable<void> coordinator_service::unload_on_shard(slot* s) {
    if (s->timer) {
        s->timer->cancel();
    }
    if (s->coordinator) {
        s->coordinator->unload();
    }
    co_return;
}

void coordinator_service::rearm(slot& s) {
    if (!s.coordinator || !s.timer || !s.coordinator->loaded()) {
        return;
    }
    auto next = s.coordinator->next_deadline();
    if (!next || (s.armed && *s.armed <= *next)) {
        return;
    }
    auto delay = std::max(time_ms(0), *next - _clock.now());
    s.armed = *next;
    s.timer->expires_after(delay);
    s.timer->async_wait([this, &s](boost::system::error_code ec) {
        if (ec) {
            return;  // re-pointed at an earlier deadline, or stopped
        }
        s.armed.reset();
        if (s.coordinator) {
            s.coordinator->poll();
        }
        rearm(s);
    });
}

std::vector<group_summary> coordinator_service::groups() const {
    std::vector<group_summary> out;
    if (!started()) {
        return out;
    }
    for (const auto& s : _slots) {
        auto snap = s->coordinator->snapshot();
        out.insert(out.end(), snap->groups.begin(), snap->groups.end());
    }
    return out;
}

std::vector<committed_entry> coordinator_service::committed_offsets() const {
    std::vector<committed_entry> out;
    if (!started()) {
        return out;
    }
    for (const auto& s : _slots) {
        auto snap = s->coordinator->snapshot();
        out.insert(out.end(), snap->offsets.begin(), snap->offsets.end());
    }
    return out;
}

}  // namespace spool::broker::coordinator
