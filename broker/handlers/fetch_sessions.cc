#include "broker/handlers/fetch_sessions.h"

#include <limits>
#include <tuple>

namespace spool::broker::handlers {

session_partition& session_partitions::upsert(const partition_key& key) {
    if (auto it = _index.find(key); it != _index.end()) {
        return it->second->second;
    }
    _order.emplace_back(key, session_partition{});
    auto last = std::prev(_order.end());
    _index.emplace(key, last);
    return last->second;
}

bool session_partitions::erase(const partition_key& key) {
    auto it = _index.find(key);
    if (it == _index.end()) {
        return false;
    }
    _order.erase(it->second);
    _index.erase(it);
    return true;
}

session_partition* session_partitions::find(const partition_key& key) {
    auto it = _index.find(key);
    return it == _index.end() ? nullptr : &it->second->second;
}

void session_partitions::move_to_back(const partition_key& key) {
    if (auto it = _index.find(key); it != _index.end()) {
        _order.splice(_order.end(), _order, it->second);
    }
}

int32_t next_session_epoch(int32_t epoch) {
    if (epoch < 0) {
        return -1;  // after the final epoch comes the final epoch
    }
    return epoch == std::numeric_limits<int32_t>::max() ? 1 : epoch + 1;
}

fetch_session_shard::fetch_session_shard(size_t shard, size_t shard_count, size_t max_sessions,
                                         fetch_session_counters& counters, int64_t eviction_ms)
    : _shard(shard),
      _shard_count(shard_count),
      _max(max_sessions),
      _eviction_ms(eviction_ms),
      _counters(counters),
      _random(std::random_device{}()) {}

int32_t fetch_session_shard::new_id() {
    // Random, so that a client cannot guess another's session; id % shard_count names the owner.
    const auto n = static_cast<uint32_t>(_shard_count);
    const uint32_t top = static_cast<uint32_t>(std::numeric_limits<int32_t>::max());
    std::uniform_int_distribution<uint32_t> pick(0, top / n - 1);
    for (;;) {
        uint32_t id = pick(_random) * n + static_cast<uint32_t>(_shard);
        if (id != 0 && id <= top && !_sessions.contains(static_cast<int32_t>(id))) {
            return static_cast<int32_t>(id);
        }
    }
}

std::shared_ptr<fetch_session> fetch_session_shard::create(int64_t now_ms, bool privileged,
                                                           bool uses_topic_ids,
                                                           session_partitions partitions) {
    if (_sessions.size() >= _max && !try_evict(privileged, partitions.size(), now_ms)) {
        return nullptr;
    }
    auto s = std::make_shared<fetch_session>();
    s->id = new_id();
    s->epoch = next_session_epoch(0);
    s->privileged = privileged;
    s->uses_topic_ids = uses_topic_ids;
    s->created_ms = now_ms;
    s->partitions = std::move(partitions);
    touch(*s, now_ms);
    _sessions.emplace(s->id, s);
    _counters.created.fetch_add(1, std::memory_order_relaxed);
    _counters.live.fetch_add(1, std::memory_order_relaxed);
    return s;
}

bool fetch_session_shard::try_evict(bool privileged, size_t size, int64_t now_ms) {
    // The least recently used session (ties: the smaller id), evicted when stale.
    const fetch_session* lru = nullptr;
    // The least valuable evictable one: (privileged, cached size, id) smallest.
    const fetch_session* cheapest = nullptr;
    auto value = [](const fetch_session& s) {
        return std::tuple(s.privileged, s.cached_size, s.id);
    };
    for (const auto& [id, s] : _sessions) {
        if (lru == nullptr ||
            std::pair(s->last_used_ms, s->id) < std::pair(lru->last_used_ms, lru->id)) {
            lru = s.get();
        }
        bool evictable = privileged ? s->evictable_by_privileged : s->evictable_by_all;
        if (evictable && (cheapest == nullptr || value(*s) < value(*cheapest))) {
            cheapest = s.get();
        }
    }
    if (lru == nullptr) {
        return false;
    }
    int32_t victim = 0;
    if (now_ms - lru->last_used_ms > _eviction_ms) {
        victim = lru->id;
    } else if (cheapest != nullptr &&
               std::tuple(privileged, size, int32_t{0}) >= value(*cheapest)) {
        victim = cheapest->id;
    } else {
        return false;
    }
    remove(victim);
    _counters.evicted.fetch_add(1, std::memory_order_relaxed);
    return true;
}

std::shared_ptr<fetch_session> fetch_session_shard::find(int32_t id) const {
    auto it = _sessions.find(id);
    return it == _sessions.end() ? nullptr : it->second;
}

bool fetch_session_shard::remove(int32_t id) {
    if (_sessions.erase(id) == 0) {
        return false;
    }
    _counters.live.fetch_sub(1, std::memory_order_relaxed);
    return true;
}

void fetch_session_shard::touch(fetch_session& session, int64_t now_ms) {
    session.last_used_ms = now_ms;
    session.cached_size = session.partitions.size();
    bool old = now_ms - session.created_ms > _eviction_ms;
    session.evictable_by_privileged = !session.privileged || old;
    session.evictable_by_all = old;
}

incremental_start start_incremental(fetch_session_shard& shard, int32_t id, int32_t epoch,
                                    bool uses_topic_ids, std::span<const session_update> updates,
                                    std::span<const partition_key> forgotten, int64_t now_ms) {
    using protocol::error_code;
    incremental_start out;
    auto session = shard.find(id);
    if (!session) {
        out.error = error_code::fetch_session_id_not_found;
        return out;
    }
    if (session->epoch != epoch) {
        out.error = error_code::invalid_fetch_session_epoch;
        return out;
    }
    if (session->uses_topic_ids != uses_topic_ids) {
        out.error = error_code::fetch_session_topic_id_error;
        return out;
    }
    for (const auto& u : updates) {
        auto& sp = session->partitions.upsert(u.key);
        sp.fetch_offset = u.fetch_offset;
        sp.max_bytes = u.max_bytes;
    }
    for (const auto& key : forgotten) {
        session->partitions.erase(key);
    }
    if (session->partitions.empty()) {
        shard.remove(id);
        for (const auto& u : updates) {
            out.partitions.emplace_back(u.key, session_partition{u.fetch_offset, u.max_bytes});
        }
        return out;
    }
    shard.touch(*session, now_ms);
    session->epoch = next_session_epoch(session->epoch);
    out.partitions.assign(session->partitions.begin(), session->partitions.end());
    out.session = std::move(session);
    return out;
}

bool session_still_expects(const fetch_session& session, int32_t request_epoch) {
    return session.epoch == next_session_epoch(request_epoch);
}

bool record_partition_response(session_partition& sp, bool has_records, bool has_error,
                               int64_t high_watermark, int64_t log_start) {
    bool news = has_records || has_error || high_watermark != sp.last_high_watermark ||
                log_start != sp.last_log_start;
    sp.last_high_watermark = has_error ? -1 : high_watermark;
    sp.last_log_start = log_start;
    return news;
}

fetch_session_cache::fetch_session_cache(size_t slots, size_t shard_count, int64_t eviction_ms) {
    shard_count = std::max<size_t>(shard_count, 1);
    for (size_t i = 0; i < shard_count; ++i) {
        size_t share = slots / shard_count + (i < slots % shard_count ? 1 : 0);
        _shards.push_back(
            std::make_unique<fetch_session_shard>(i, shard_count, share, _counters, eviction_ms));
    }
}

size_t fetch_session_cache::owner_of(int32_t id) const {
    return static_cast<uint32_t>(id) % _shards.size();
}

}  // namespace spool::broker::handlers
