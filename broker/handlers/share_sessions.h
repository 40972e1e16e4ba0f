#pragma once

// Share sessions (KIP-932; Kafka's ShareSessionCache): a member's ShareFetch/ShareAcknowledge
// requests to this broker form a session keyed by (group, member). The session remembers the
// partitions the member fetches; a request lists those it adds (Topics), then those it drops
// (ForgottenTopicsData; releasing nothing, as in Kafka). Epochs, as ShareSessionContext checks:
//
//   ShareFetch epoch 0        opens a session (one already open for the key is replaced)
//   ShareFetch epoch -1       closes it: its acknowledgements apply, nothing is fetched, the
//                             member's records on its partitions are released
//   ShareFetch epoch N > 0    SHARE_SESSION_NOT_FOUND without a session, INVALID_SHARE_SESSION_
//                             EPOCH unless N is the one it expects; then N + 1 is expected
//   ShareAcknowledge          the same, except that epoch 0 is INVALID_SHARE_SESSION_EPOCH
//
// Threading: one table for the broker behind a mutex; each step is short and never suspends.
// Not bounded yet (Kafka's share.fetch.max.sessions): a member that disappears without closing
// leaves its entry until the broker restarts.

#include "protocol/errors.h"
#include "protocol/wire/uuid.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace spool::broker::handlers {

using share_tip = std::pair<protocol::uuid, int32_t>;  // topic id, partition

struct share_session_step {
    protocol::error_code error = protocol::error_code::none;
    std::vector<share_tip> partitions;  // the session's partitions after the step
    std::vector<share_tip> released;    // closed: release the member's records
    bool closed = false;
};

class share_session_cache {
public:
    share_session_step fetch(const std::string& group, const std::string& member, int32_t epoch,
                             const std::vector<share_tip>& added,
                             const std::vector<share_tip>& forgotten);
    share_session_step acknowledge(const std::string& group, const std::string& member,
                                   int32_t epoch);

private:
    struct session {
        int32_t next_epoch = 1;
        std::set<share_tip> partitions;
    };
    using key = std::pair<std::string, std::string>;
    share_session_step advance(const key& k, int32_t epoch, const std::vector<share_tip>& added,
                               const std::vector<share_tip>& forgotten);

    std::mutex _mutex;
    std::map<key, session> _sessions;
};

}  // namespace spool::broker::handlers
