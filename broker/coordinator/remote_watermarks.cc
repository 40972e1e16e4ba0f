#include "broker/coordinator/remote_watermarks.h"

#include "broker/cluster/leader_endpoints.h"
#include "common/log.h"
#include "protocol/messages/list_offsets.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <set>
#include <vector>

namespace spool::broker::coordinator {

namespace asio = boost::asio;

remote_watermarks::remote_watermarks(const metadata::store& store,
                                     const cluster::partition_manager& partitions,
                                     const coordinator_service& groups, runtime::shard_pool& pool,
                                     remote_watermarks_options options)
    : _store(store),
      _partitions(partitions),
      _groups(groups),
      _pool(pool),
      _options(std::move(options)) {}

remote_watermarks::~remote_watermarks() {
    stop();
}

void remote_watermarks::start() {
    if (_started) {
        return;
    }
    _started = true;
    asio::co_spawn(_pool.executor(0), run(_store, _partitions, _groups, _options, _state),
                   asio::detached);
}

void remote_watermarks::stop() {
    _state->stopped.store(true, std::memory_order_release);
}

std::optional<int64_t> remote_watermarks::high_watermark(const model::topic_partition& tp) const {
    std::lock_guard lk(_state->mu);
    auto it = _state->marks.find(tp);
    if (it == _state->marks.end()) {
        return std::nullopt;
    }
    return it->second;
}

namespace {

// The newest ListOffsets version both sides speak; 1 is the first with a single offset answer.
int16_t list_offsets_version(const replication::leader_client& c) {
    for (int16_t v = 7; v > 1; --v) {
        if (c.supports(protocol::api_key::list_offsets, v)) {
            return v;
        }
    }
    return 1;
}

protocol::list_offsets_request latest_of(const std::vector<model::topic_partition>& tps) {
    protocol::list_offsets_request req;
    req.replica_id = -1;      // as a consumer: "latest" is the high watermark
    req.isolation_level = 0;  // read_uncommitted, as Kafka's lag tools ask
    std::map<std::string, std::vector<int32_t>> by_topic;
    for (const auto& tp : tps) {
        by_topic[tp.topic].push_back(tp.partition.value());
    }
    for (auto& [name, ids] : by_topic) {
        auto& t = req.topics.emplace_back();
        t.name = name;
        for (int32_t id : ids) {
            auto& p = t.partitions.emplace_back();
            p.partition_index = id;
            p.timestamp = -1;  // latest
        }
    }
    return req;
}

}  // namespace

asio::awaitable<void> remote_watermarks::run(const metadata::store& store,
                                             const cluster::partition_manager& partitions,
                                             const coordinator_service& groups,
                                             remote_watermarks_options options,
                                             std::shared_ptr<state> st) {
    auto ex = co_await asio::this_coro::executor;
    asio::steady_timer timer(ex);
    const auto call_timeout = std::min(options.interval, std::chrono::milliseconds(5000));
    while (!st->stopped.load(std::memory_order_acquire)) {
        // What the groups need that no local log answers, by leader. Only here, before the
        // first suspension of the round, are the store, the partitions and the groups touched:
        // once stopped, the broker may destroy them while a call below is still pending.
        std::set<model::topic_partition> wanted;
        std::map<int32_t, std::vector<model::topic_partition>> by_leader;
        std::map<int32_t, replication::leader_endpoint> endpoints;
        {
            auto snap = store.snapshot();
            for (const auto& c : groups.committed_offsets()) {
                const auto* topic = snap->find(c.tp.topic);
                if (topic == nullptr || !topic->has_partition(c.tp.partition.value()) ||
                    wanted.contains(c.tp)) {
                    continue;
                }
                const auto& p = topic->partitions[static_cast<size_t>(c.tp.partition.value())];
                if (partitions.hosts(p)) {
                    continue;
                }
                wanted.insert(c.tp);
                if (p.leader < 0) {
                    continue;
                }
                if (!endpoints.contains(p.leader)) {
                    auto b = snap->brokers.find(p.leader);
                    auto where = b == snap->brokers.end()
                                     ? std::nullopt
                                     : cluster::inter_broker_endpoint(b->second, options.listener);
                    if (!where) {
                        continue;
                    }
                    endpoints.emplace(p.leader, *where);
                }
                by_leader[p.leader].push_back(c.tp);
            }
        }
        std::map<model::topic_partition, int64_t> answered;
        for (auto& [leader, tps] : by_leader) {
            replication::leader_client client(ex, options.client);
            if (auto ec = co_await client.connect(endpoints.at(leader))) {
                log::get("groups")->debug("lag: broker {} unreachable: {}", leader, ec.message());
                continue;
            }
            auto resp = co_await client.call<protocol::list_offsets_response>(
                latest_of(tps), list_offsets_version(client), call_timeout);
            client.close();
            if (!resp) {
                log::get("groups")->debug("lag: ListOffsets to broker {} failed: {}", leader,
                                          resp.error().message());
                continue;
            }
            for (const auto& t : resp.value().body.topics) {
                for (const auto& p : t.partitions) {
                    if (p.error_code == 0 && p.offset >= 0) {
                        answered[{t.name, model::partition_id{p.partition_index}}] = p.offset;
                    }
                }
            }
            if (st->stopped.load(std::memory_order_acquire)) {
                co_return;
            }
        }
        {
            std::lock_guard lk(st->mu);
            for (const auto& [tp, mark] : st->marks) {
                if (wanted.contains(tp) && !answered.contains(tp)) {
                    answered.emplace(tp, mark);  // its leader did not answer this round
                }
            }
            st->marks = std::move(answered);
        }
        timer.expires_after(options.interval);
        boost::system::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
}

}  // namespace spool::broker::coordinator
