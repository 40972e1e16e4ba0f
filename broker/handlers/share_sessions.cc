#include "broker/handlers/share_sessions.h"

namespace spool::broker::handlers {

namespace {
constexpr int32_t final_epoch = -1;
}  // namespace

share_session_step share_session_cache::advance(const key& k, int32_t epoch,
                                                const std::vector<share_tip>& added,
                                                const std::vector<share_tip>& forgotten) {
    share_session_step step;
    auto it = _sessions.find(k);
    if (it == _sessions.end()) {
        step.error = protocol::error_code::share_session_not_found;
        return step;
    }
    auto& s = it->second;
    if (epoch == final_epoch) {
        step.released.assign(s.partitions.begin(), s.partitions.end());
        step.closed = true;
        _sessions.erase(it);
        return step;
    }
    if (epoch != s.next_epoch) {
        step.error = protocol::error_code::invalid_share_session_epoch;
        return step;
    }
    s.next_epoch = s.next_epoch == INT32_MAX ? 1 : s.next_epoch + 1;
    // Kafka's ShareSession.update: the request's partitions first, then the forgotten ones, so
    // a partition in both (the Java client's way to acknowledge records of a partition it no
    // longer owns) leaves the session. Forgetting releases nothing: the member may still
    // acknowledge what it holds, and what it never does comes back when its lock expires.
    s.partitions.insert(added.begin(), added.end());
    for (const auto& tip : forgotten) {
        s.partitions.erase(tip);
    }
    step.partitions.assign(s.partitions.begin(), s.partitions.end());
    return step;
}

share_session_step share_session_cache::fetch(const std::string& group, const std::string& member,
                                              int32_t epoch, const std::vector<share_tip>& added,
                                              const std::vector<share_tip>& forgotten) {
    std::lock_guard lock(_mutex);
    key k{group, member};
    if (epoch == 0) {
        auto& s = _sessions[k];
        s = session{};
        s.partitions.insert(added.begin(), added.end());
        share_session_step step;
        step.partitions.assign(s.partitions.begin(), s.partitions.end());
        return step;
    }
    if (epoch < final_epoch) {
        share_session_step step;
        step.error = protocol::error_code::invalid_share_session_epoch;
        return step;
    }
    return advance(k, epoch, added, forgotten);
}

share_session_step share_session_cache::acknowledge(const std::string& group,
                                                    const std::string& member, int32_t epoch) {
    std::lock_guard lock(_mutex);
    if (epoch == 0 || epoch < final_epoch) {
        share_session_step step;
        step.error = protocol::error_code::invalid_share_session_epoch;
        return step;
    }
    return advance({group, member}, epoch, {}, {});
}

}  // namespace spool::broker::handlers
