#include "broker/replication/replica_fetchers.h"

#include <boost/asio/use_future.hpp>

#include <cassert>
#include <future>

namespace spool::broker::replication {

namespace asio = boost::asio;

fetcher_options fetcher_options_from(const config::broker_config& config) {
    fetcher_options o;
    o.self = static_cast<int32_t>(config.node_id());
    o.max_wait = config.get(config::keys::replica_fetch_wait_max_ms);
    o.min_bytes = config.get(config::keys::replica_fetch_min_bytes);
    o.partition_max_bytes = config.get(config::keys::replica_fetch_max_bytes);
    o.response_max_bytes = config.get(config::keys::replica_fetch_response_max_bytes);
    o.backoff = config.get(config::keys::replica_fetch_backoff_ms);
    o.socket_timeout = config.get(config::keys::replica_socket_timeout_ms);
    o.connect_timeout = config.get(config::keys::socket_connection_setup_timeout_ms);
    o.max_batch_bytes = config.get(config::keys::message_max_bytes);
    return o;
}

replica_fetchers::replica_fetchers(runtime::shard_pool& pool, fetcher_options options,
                                   int32_t num_fetchers, partition_lookup lookup,
                                   endpoint_resolver resolve, metrics::replica_fetcher_probe* probe)
    : _pool(pool),
      _options(options),
      _num_fetchers(std::max(num_fetchers, 1)),
      _lookup(std::move(lookup)),
      _resolve(std::move(resolve)),
      _probe(probe) {
    for (size_t i = 0; i < pool.shard_count(); ++i) {
        _shards.push_back(std::make_unique<shard_table>());
    }
}

replica_fetchers::~replica_fetchers() = default;

replica_fetchers::shard_table& replica_fetchers::here() {
    auto shard = runtime::shard_pool::current_shard();
    assert(shard && *shard < _shards.size());
    return *_shards[*shard];
}

const replica_fetchers::shard_table& replica_fetchers::here() const {
    return *_shards[*runtime::shard_pool::current_shard()];
}

void replica_fetchers::on_role(const model::topic_partition& tp, partition_role role,
                               int32_t leader, int32_t leader_epoch) {
    const auto here = runtime::shard_pool::current_shard();
    if (!here || *here >= _shards.size()) {
        return;  // not on a shard of ours (the contract says owner shard; never trust a crash)
    }
    const size_t shard = *here;
    auto& table = *_shards[shard];
    if (table.stopped) {
        return;
    }
    auto had = table.followed.find(tp);
    const bool follows = role == partition_role::follower && leader >= 0 && leader != _options.self;
    const fetcher_key key{leader, static_cast<int32_t>(std::hash<model::topic_partition>{}(tp) %
                                                       static_cast<size_t>(_num_fetchers))};
    if (had != table.followed.end() && (!follows || had->second != key)) {
        table.fetchers.at(had->second)->drop(tp);
        table.followed.erase(had);
    }
    if (!follows) {
        return;
    }
    auto& fetcher = table.fetchers[key];
    if (!fetcher) {
        fetcher = std::make_unique<replica_fetcher>(
            _pool.executor(shard), leader, _options, _lookup, _resolve,
            _probe != nullptr ? _probe->add(leader, shard, key.fetcher_id) : nullptr);
        fetcher->start();
    }
    fetcher->follow(tp, leader_epoch);
    table.followed[tp] = key;
}

int32_t replica_fetchers::leader_here(const model::topic_partition& tp) const {
    const auto& table = here();
    auto it = table.followed.find(tp);
    return it == table.followed.end() ? -1 : it->second.leader;
}

asio::awaitable<int> replica_fetchers::stop_shard(replica_fetchers* self, size_t shard) {
    auto& table = *self->_shards[shard];
    table.stopped = true;
    for (auto& [key, fetcher] : table.fetchers) {
        co_await fetcher->stop();
    }
    table.fetchers.clear();
    table.followed.clear();
    co_return 0;
}

void replica_fetchers::stop() {
    if (_stopped) {
        return;
    }
    _stopped = true;
    std::vector<std::future<int>> done;
    for (size_t s = 0; s < _shards.size(); ++s) {
        done.push_back(asio::co_spawn(_pool.executor(s), stop_shard(this, s), asio::use_future));
    }
    for (auto& f : done) {
        f.get();
    }
}

}  // namespace spool::broker::replication
