#pragma once

// Adapters from the broker's modules to broker/http's read-only views. Composition-root glue:
// belongs in broker/app (it may depend on every module; broker/http depends on none).

#include "broker/app/owner_shards.h"
#include "broker/cluster/partition_manager.h"
#include "broker/config/broker_config.h"
#include "broker/config/topic_config.h"
#include "broker/coordinator/coordinator_service.h"
#include "broker/coordinator/remote_watermarks.h"
#include "broker/http/views.h"
#include "broker/metadata/controller/plan/decommission.h"
#include "broker/metadata/errc.h"
#include "broker/metadata/store.h"

#include <memory>
#include <string>
#include <vector>

namespace spool::broker::app {

// The cluster as this broker's metadata snapshot shows it: every live broker (with the endpoint
// of its first listener), the controller, every topic. With the embedded store that is this
// broker alone, its own controller.
class cluster_view_adapter : public http::cluster_view {
public:
    cluster_view_adapter(const metadata::store& store, const config::broker_config& config,
                         std::string host, int32_t port)
        : _store(store), _config(config), _host(std::move(host)), _port(port) {}

    http::cluster_snapshot snapshot() const override {
        auto s = _store.snapshot();
        http::cluster_snapshot out;
        out.cluster_id = s->cluster_id;
        if (s->controller_id >= 0) {
            out.controller = model::node_id{s->controller_id};
        }
        for (const auto& [id, b] : s->brokers) {
            http::broker_info bi{model::node_id{id}, {}, 0, b.rack, true};
            if (!b.endpoints.empty()) {
                bi.host = b.endpoints.front().host;
                bi.port = b.endpoints.front().port;
            }
            out.brokers.push_back(std::move(bi));
        }
        if (s->brokers.empty()) {
            // Not registered (yet): at least this broker, as it advertises itself.
            auto self = model::node_id{static_cast<int32_t>(_config.node_id())};
            out.brokers.push_back(
                {self, _host, _port, _config.get(config::keys::broker_rack), true});
        }
        for (const auto& [name, t] : s->topics) {
            http::topic_info ti;
            ti.name = name;
            ti.internal = name.starts_with("__");
            ti.min_insync_replicas =
                static_cast<int32_t>(config::resolve_topic(_config, t.configs).min_insync_replicas);
            for (const auto& p : t.partitions) {
                http::partition_info pi;
                pi.id = model::partition_id{p.partition};
                if (p.leader >= 0)
                    pi.leader = model::node_id{p.leader};
                pi.leader_epoch = model::leader_epoch{p.leader_epoch};
                for (int32_t r : p.replicas)
                    pi.replicas.push_back(model::node_id{r});
                for (int32_t r : p.isr)
                    pi.isr.push_back(model::node_id{r});
                ti.partitions.push_back(std::move(pi));
            }
            out.topics.push_back(std::move(ti));
        }
        return out;
    }

    std::optional<std::string> unready_reason() const override { return _store.unready_reason(); }

private:
    const metadata::store& _store;
    const config::broker_config& _config;
    std::string _host;
    int32_t _port;
};

// Partition logs live on their owner shard; visit each shard with a posted task and wait
// (bounded) on the HTTP thread. A shard that does not answer in time is skipped this scrape.
// Decommission through the metadata store (store::start_decommission / cancel_decommission,
// decommission.h). The writes block the HTTP thread until committed (the store's change
// timeout at most): an operator's occasional call, not a hot path.
class decommission_adapter : public http::decommission_control {
public:
    explicit decommission_adapter(metadata::store& store) : _store(store) {}

    answer start(model::node_id broker) override {
        return answer_of(metadata::wait_for(_store.start_decommission(broker.value())), broker);
    }
    answer cancel(model::node_id broker) override {
        return answer_of(metadata::wait_for(_store.cancel_decommission(broker.value())), broker);
    }
    std::optional<http::decommission_status> status(model::node_id broker) const override {
        auto s = _store.snapshot();
        auto p = metadata::progress_of(*s, broker.value());
        if (!p.marked && !s->is_live(broker.value())) {
            return std::nullopt;
        }
        return http::decommission_status{p.marked, p.remaining, p.moving, p.done};
    }

private:
    static answer answer_of(const result<void>& r, model::node_id broker) {
        if (r) {
            return {};
        }
        using metadata::errc;
        if (r.error() == make_error_code(errc::unknown_broker)) {
            return {outcome::unknown_broker, r.error().message()};
        }
        if (r.error() == make_error_code(errc::invalid_replica_assignment)) {
            return {outcome::no_replacement,
                    "cannot decommission broker " + std::to_string(broker.value()) +
                        ": some partition has no other eligible broker to move its replica to "
                        "(its replication factor equals the brokers left)"};
        }
        return {outcome::unavailable,
                "the metadata store could not commit the change: " + r.error().message()};
    }

    metadata::store& _store;
};

class log_view_adapter : public http::log_view {
public:
    log_view_adapter(const metadata::store& store, cluster::partition_manager& partitions)
        : _store(store), _partitions(partitions) {}

    std::vector<http::log_info> logs() const override {
        return gather_from_owner_shards<http::log_info>(
            _store, _partitions,
            [this](const model::topic_partition& tp, std::vector<http::log_info>& out) {
                if (auto* log = _partitions.local(tp)) {
                    out.push_back({tp, log->log_start_offset(), log->log_end_offset(),
                                   log->high_watermark(), log->size_bytes(),
                                   log->segment_count()});
                }
            });
    }

private:
    const metadata::store& _store;
    cluster::partition_manager& _partitions;
};

class group_view_adapter : public http::group_view {
public:
    group_view_adapter(const coordinator::coordinator_service& groups,
                       const coordinator::remote_watermarks* remote)
        : _groups(groups), _remote(remote) {}

    std::vector<http::group_info> groups() const override {
        std::vector<http::group_info> out;
        for (const auto& g : _groups.groups()) {
            out.push_back({g.id, std::string(coordinator::to_string(g.state)), g.protocol_type,
                           g.generation, g.members});
        }
        return out;
    }
    std::vector<http::committed_offset> committed_offsets() const override {
        std::vector<http::committed_offset> out;
        for (const auto& c : _groups.committed_offsets()) {
            auto remote = _remote ? _remote->high_watermark(c.tp) : std::nullopt;
            out.push_back({c.group, c.tp, model::offset{c.offset}, model::offset{remote.value_or(-1)}});
        }
        return out;
    }

private:
    const coordinator::coordinator_service& _groups;
    const coordinator::remote_watermarks* _remote;
};

}  // namespace spool::broker::app
