#pragma once

// Incremental fetch sessions (KIP-227). A consumer that sends session_id 0 / epoch 0 gets a
// session: the broker remembers the partitions it fetches, and later requests (same id, next
// epoch) list only partitions that changed, while responses carry only partitions with news
// (records, a moved high watermark or log start, an error). The rules, as Apache Kafka's
// FetchManager applies them:
//
//   session_id == 0, epoch == -1   full fetch, no session
//   session_id == 0, epoch ==  0   full fetch; its answer opens a session (when a slot is free or
//                                  one may be evicted) and carries the id; the session then
//                                  expects epoch 1
//   session_id == S, epoch == -1   close S, then a full sessionless fetch
//   session_id == S, epoch ==  0   close S, full fetch, open a new session
//   session_id == S, other epoch   incremental on S: FETCH_SESSION_ID_NOT_FOUND unless S is live
//                                  (S == 0 never is), INVALID_FETCH_SESSION_EPOCH unless the epoch
//                                  is the one S expects, FETCH_SESSION_TOPIC_ID_ERROR when the
//                                  request's use of topic ids (v13+) differs from S's. Accepted,
//                                  it advances S's expected epoch by one (INT32_MAX wraps to 1).
//
// Ownership and threading: a session belongs to one shard, the one whose connection opened it,
// and its id says which (id % shard_count). Only that shard's thread reads or changes the session
// or its shard's table (fetch_session_shard), so nothing here takes a lock: a fetch that arrives
// on another shard hops to the owner (runtime::run_on) for its two short session steps. Clients
// keep one connection per broker, so the owner is nearly always the shard the fetch already runs on
// and the hop runs inline. Each step runs without a suspension point, so of two fetches carrying
// the same epoch exactly one is accepted. (A global mutex would serialise every shard's fetches;
// and a lock around the lookup alone, as before, left the session's own fields racing.) Kafka
// splits its cache the same way (FetchSessionCacheShard, KAFKA-9401), ids naming their shard.
//
// Capacity: max.incremental.fetch.session.cache.slots split evenly over the shards; a full
// shard evicts with Kafka's rules (fetch_session_shard::create).

#include "broker/handlers/model_key.h"
#include "protocol/errors.h"

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace spool::broker::handlers {

struct session_partition {
    int64_t fetch_offset = 0;
    int32_t max_bytes = 0;
    // What the last response told the client, to decide whether there is news.
    int64_t last_high_watermark = -1;
    int64_t last_log_start = -1;
};

// A session's partitions in fetch order. A partition that returned records moves to the back
// (KIP-227), so that a response-size limit does not starve the partitions after it.
class session_partitions {
public:
    using entry = std::pair<partition_key, session_partition>;

    // The partition's entry; a new one is appended at the back.
    session_partition& upsert(const partition_key& key);
    bool erase(const partition_key& key);
    session_partition* find(const partition_key& key);
    void move_to_back(const partition_key& key);
    size_t size() const { return _order.size(); }
    bool empty() const { return _order.empty(); }
    std::list<entry>::const_iterator begin() const { return _order.begin(); }
    std::list<entry>::const_iterator end() const { return _order.end(); }

private:
    std::list<entry> _order;
    std::map<partition_key, std::list<entry>::iterator> _index;
};

struct fetch_session {
    int32_t id = 0;
    int32_t epoch = 1;            // the epoch the next incremental fetch must carry
    bool privileged = false;      // opened by a follower replica: Kafka evicts these last
    bool uses_topic_ids = false;  // opened by a v13+ fetch
    int64_t created_ms = 0;
    int64_t last_used_ms = 0;
    session_partitions partitions;
    // Eviction bookkeeping as of the last touch (Kafka's cachedSize and evictable sets).
    size_t cached_size = 0;
    bool evictable_by_all = false;
    bool evictable_by_privileged = false;
};

// Kafka's FetchMetadata.nextEpoch: epochs count 1, 2, ... INT32_MAX, then 1 again.
int32_t next_session_epoch(int32_t epoch);

// Broker-wide counts, read by the metrics endpoint (relaxed atomics, any thread).
struct fetch_session_counters {
    std::atomic<int64_t> live{0};
    std::atomic<uint64_t> created{0};
    std::atomic<uint64_t> evicted{0};
    std::atomic<uint64_t> invalid_epoch{0};
    std::atomic<uint64_t> not_found{0};
};

// Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: a session unused this long is stale, and a
// session younger than this is safe from eviction by a larger one.
inline constexpr int64_t fetch_session_eviction_ms = 120'000;

// One shard's sessions. Only that shard's thread uses it (see the file comment).
class fetch_session_shard {
public:
    fetch_session_shard(size_t shard, size_t shard_count, size_t max_sessions,
                        fetch_session_counters& counters,
                        int64_t eviction_ms = fetch_session_eviction_ms);

    // Opens a session holding `partitions` (expected epoch 1), with a random id that is not 0,
    // names this shard and no live session has. A full shard first evicts, as Kafka does, the
    // least recently used session if unused for eviction_ms; else the least valuable session
    // (non-privileged before privileged, then fewest partitions) among those older than
    // eviction_ms (a privileged newcomer may also evict young non-privileged ones), provided the
    // newcomer is privileged over it or has more partitions. nullptr when nothing may go.
    std::shared_ptr<fetch_session> create(int64_t now_ms, bool privileged, bool uses_topic_ids,
                                          session_partitions partitions);
    std::shared_ptr<fetch_session> find(int32_t id) const;
    bool remove(int32_t id);
    // Marks the session used now and refreshes its eviction bookkeeping.
    void touch(fetch_session& session, int64_t now_ms);
    size_t size() const { return _sessions.size(); }
    size_t max_sessions() const { return _max; }

private:
    bool try_evict(bool privileged, size_t size, int64_t now_ms);
    int32_t new_id();

    size_t _shard;
    size_t _shard_count;
    size_t _max;
    int64_t _eviction_ms;
    fetch_session_counters& _counters;
    std::mt19937_64 _random;
    std::unordered_map<int32_t, std::shared_ptr<fetch_session>> _sessions;
};

// The request's changes to an incremental session.
struct session_update {
    partition_key key;
    int64_t fetch_offset = 0;
    int32_t max_bytes = 0;
};

// What an incremental request resolved to (Kafka's newContext).
struct incremental_start {
    protocol::error_code error = protocol::error_code::none;
    // The session, its epoch already advanced; nullptr on error or when the request emptied it
    // (closed: the fetch goes on sessionless with the request's own partitions).
    std::shared_ptr<fetch_session> session;
    // The partitions to read, in the session's fetch order (a copy: reads run on other shards).
    std::vector<session_partitions::entry> partitions;
};

// On the session's owner shard: validates and applies an incremental request.
incremental_start start_incremental(fetch_session_shard& shard, int32_t id, int32_t epoch,
                                    bool uses_topic_ids, std::span<const session_update> updates,
                                    std::span<const partition_key> forgotten, int64_t now_ms);

// On the owner shard, when answering: false when another fetch used the session after this one
// started (Kafka then answers INVALID_FETCH_SESSION_EPOCH: a duplicate request).
bool session_still_expects(const fetch_session& session, int32_t request_epoch);

// Records what a response says about one partition of a session; true when that is news the
// incremental response must carry. An error resets the remembered high watermark, so that the
// partition is sent again once the error clears (as Kafka does).
bool record_partition_response(session_partition& sp, bool has_records, bool has_error,
                               int64_t high_watermark, int64_t log_start);

// Every shard's table, built by the composition root. Lifecycle: outlives the listener.
class fetch_session_cache {
public:
    // slots: max.incremental.fetch.session.cache.slots, split over the shards.
    fetch_session_cache(size_t slots, size_t shard_count,
                        int64_t eviction_ms = fetch_session_eviction_ms);

    size_t shard_count() const { return _shards.size(); }
    // The shard that owns session `id` (any id, live or not).
    size_t owner_of(int32_t id) const;
    // Use only on shard i's thread.
    fetch_session_shard& shard(size_t i) { return *_shards[i]; }
    fetch_session_counters& counters() { return _counters; }
    const fetch_session_counters& counters() const { return _counters; }

private:
    fetch_session_counters _counters;
    std::vector<std::unique_ptr<fetch_session_shard>> _shards;
};

}  // namespace spool::broker::handlers
