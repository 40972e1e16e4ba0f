#include "tests/fuzz/request_clamps.h"

#include "protocol/api/framing.h"
#include "protocol/messages/create_partitions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/heartbeat.h"
#include "protocol/messages/join_group.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/sync_group.h"

#include <algorithm>

namespace spool::tests::fuzz {

namespace {

namespace proto = spool::protocol;

template <class T>
void cap(T& value, T most) {
    value = std::min(value, most);
}

template <class V>
void cap_size(V& items, size_t most) {
    if (items.size() > most) {
        items.resize(most);
    }
}

// Replaces a named member with the connection's own; true when something changed.
bool adopt(std::string& member_id, int32_t* generation, const membership& m) {
    if (m.member_id.empty() || member_id.empty()) {
        return false;
    }
    bool changed = member_id != m.member_id || (generation && *generation != m.generation);
    member_id = m.member_id;
    if (generation) {
        *generation = m.generation;
    }
    return changed;
}

bool clamp(proto::fetch_request& r, const membership&) {
    if (r.max_wait_ms <= fuzz_max_wait_ms) {
        return false;
    }
    r.max_wait_ms = fuzz_max_wait_ms;
    return true;
}

bool clamp(proto::join_group_request& r, const membership& m) {
    // A consumer rejoins with the id it was given (MEMBER_ID_REQUIRED included).
    bool adopted = !m.member_id.empty() && r.member_id != m.member_id;
    if (adopted) {
        r.member_id = m.member_id;
    }
    auto before = std::pair(r.session_timeout_ms, r.rebalance_timeout_ms);
    cap(r.session_timeout_ms, fuzz_max_group_timeout_ms);
    cap(r.rebalance_timeout_ms, fuzz_max_group_timeout_ms);
    return adopted || before != std::pair(r.session_timeout_ms, r.rebalance_timeout_ms);
}

bool clamp(proto::sync_group_request& r, const membership& m) {
    bool changed = adopt(r.member_id, &r.generation_id, m);
    if (!r.assignments.empty()) {
        changed = adopt(r.assignments.front().member_id, nullptr, m) || changed;
    }
    return changed;
}

bool clamp(proto::heartbeat_request& r, const membership& m) {
    return adopt(r.member_id, &r.generation_id, m);
}

bool clamp(proto::offset_commit_request& r, const membership& m) {
    return adopt(r.member_id, &r.generation_id_or_member_epoch, m);
}

bool clamp(proto::create_topics_request& r, const membership&) {
    bool changed = false;
    for (auto& t : r.topics) {
        changed = changed || t.num_partitions > fuzz_max_new_partitions ||
                  t.assignments.size() > size_t(fuzz_max_new_partitions);
        cap(t.num_partitions, fuzz_max_new_partitions);
        cap_size(t.assignments, size_t(fuzz_max_new_partitions));
    }
    return changed;
}

bool clamp(proto::create_partitions_request& r, const membership&) {
    bool changed = false;
    for (auto& t : r.topics) {
        changed = changed || t.count > fuzz_max_new_partitions ||
                  (t.assignments && t.assignments->size() > size_t(fuzz_max_new_partitions));
        cap(t.count, fuzz_max_new_partitions);
        if (t.assignments) {
            cap_size(*t.assignments, size_t(fuzz_max_new_partitions));
        }
    }
    return changed;
}

template <class Request>
std::vector<uint8_t> rewrite(std::span<const uint8_t> frame, const proto::request_view& req,
                             const membership& m) {
    auto decoded = proto::decode_request<Request>(req);
    if (!decoded || !clamp(decoded.value(), m)) {
        return {frame.begin(), frame.end()};
    }
    auto out = proto::encode_request(req.header.correlation_id, req.header.client_id, req.version(),
                                     decoded.value());
    out.erase(out.begin(), out.begin() + 4);  // the size prefix
    return out;
}

}  // namespace

std::vector<uint8_t> clamp_request(std::span<const uint8_t> frame, const membership& m) {
    auto parsed = proto::parse_request(frame);
    if (!parsed) {
        return {frame.begin(), frame.end()};
    }
    const auto& req = parsed.value();
    switch (req.key()) {
        case proto::api_key::fetch:
            return rewrite<proto::fetch_request>(frame, req, m);
        case proto::api_key::join_group:
            return rewrite<proto::join_group_request>(frame, req, m);
        case proto::api_key::create_topics:
            return rewrite<proto::create_topics_request>(frame, req, m);
        case proto::api_key::sync_group:
            return rewrite<proto::sync_group_request>(frame, req, m);
        case proto::api_key::heartbeat:
            return rewrite<proto::heartbeat_request>(frame, req, m);
        case proto::api_key::offset_commit:
            return rewrite<proto::offset_commit_request>(frame, req, m);
        case proto::api_key::create_partitions:
            return rewrite<proto::create_partitions_request>(frame, req, m);
        default:
            return {frame.begin(), frame.end()};
    }
}

}  // namespace spool::tests::fuzz
