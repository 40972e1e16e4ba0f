#pragma once

// Incremental fetch sessions (KIP-227). A consumer that sends session_id 0 / epoch 0 gets a
// session: the broker remembers the partitions it fetches, and later requests (same id, next
// epoch) list only partitions that changed, while responses carry only partitions with news
// (records, a moved high watermark or log start, an error).
//
//   session_id == 0, epoch == -1   full fetch, no session
//   session_id == 0, epoch ==  0   full fetch, open a session (if a slot is free)
//   session_id == S, epoch == -1   close S, then a full sessionless fetch
//   session_id == S, epoch ==  0   close S, full fetch, open a new session
//   session_id == S, epoch  >  0   incremental on S; epoch must be S's next epoch
//
// Threading: thread-safe; a mutex guards the cache. A session is used by one connection at a
// time (clients never pipeline two fetches of one session), so the lock is held only to look up,
// insert or evict.

#include "broker/handlers/model_key.h"

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace spool::broker::handlers {

struct session_partition {
    int64_t fetch_offset = 0;
    int32_t max_bytes = 0;
    // What the last response told the client, to decide whether there is news.
    int64_t last_high_watermark = -1;
    int64_t last_log_start = -1;
};

struct fetch_session {
    int32_t id = 0;
    int32_t next_epoch = 1;
    std::map<partition_key, session_partition> partitions;
};

class fetch_session_cache {
public:
    explicit fetch_session_cache(size_t max_sessions) : _max(max_sessions) {}

    // A new session, or nullptr when the cache is full (evicts the least recently used one
    // first, as Kafka does for sessions idle long enough; here simply the LRU).
    std::shared_ptr<fetch_session> create();
    std::shared_ptr<fetch_session> find(int32_t id);
    void remove(int32_t id);
    size_t size() const;

private:
    size_t _max;
    mutable std::mutex _mutex;
    int32_t _next_id = 1;
    std::list<int32_t> _lru;  // front = most recent
    std::unordered_map<int32_t,
                       std::pair<std::shared_ptr<fetch_session>, std::list<int32_t>::iterator>>
        _sessions;
};

}  // namespace spool::broker::handlers
