#include "broker/share/record_codec.h"

#include "broker/share/errc.h"
#include "protocol/messages/share_coordinator_records.h"
#include "protocol/wire/reader.h"
#include "protocol/wire/writer.h"

#include <algorithm>

namespace spool::broker::share {

namespace {

using protocol::wire::reader;
using protocol::wire::writer;

constexpr int16_t value_version = 0;

template <class Batches>
std::vector<state_batch> batches_of(const Batches& in) {
    std::vector<state_batch> out;
    out.reserve(in.size());
    for (const auto& b : in) {
        out.push_back({b.first_offset, b.last_offset, b.delivery_state, b.delivery_count});
    }
    return out;
}

// Reads a version-prefixed value into `msg`; false on another version or malformed bytes.
template <class Msg>
bool read_value(std::span<const uint8_t> value, Msg& msg) {
    reader r(value);
    const int16_t version = r.read_i16();
    return r.ok() && version == value_version && msg.decode(r, version) && r.ok();
}

}  // namespace

bytes encode_key(const share_key& key, record_type type) {
    protocol::share_snapshot_key k;  // ShareUpdateKey has the same fields
    k.group_id = key.group;
    k.topic_id = key.topic_id;
    k.partition = key.partition;
    bytes out;
    writer w(out);
    w.write_i16(static_cast<int16_t>(type));
    k.encode(w, 0);
    return out;
}

bytes encode_snapshot(const share_state& s) {
    protocol::share_snapshot_value v;
    v.snapshot_epoch = s.snapshot_epoch;
    v.state_epoch = s.state_epoch;
    v.leader_epoch = s.leader_epoch;
    v.start_offset = s.start_offset;
    v.delivery_complete_count = s.delivery_complete_count;
    v.create_timestamp = s.create_timestamp;
    v.write_timestamp = s.write_timestamp;
    v.state_batches.reserve(s.batches.size());
    for (const auto& b : s.batches) {
        auto& o = v.state_batches.emplace_back();
        o.first_offset = b.first_offset;
        o.last_offset = b.last_offset;
        o.delivery_state = b.delivery_state;
        o.delivery_count = b.delivery_count;
    }
    bytes out;
    writer w(out);
    w.write_i16(value_version);
    v.encode(w, value_version);
    return out;
}

result<decoded_key> decode_key(std::span<const uint8_t> key) {
    reader r(key);
    const int16_t type = r.read_i16();
    if (!r.ok() || (type != 0 && type != 1)) {
        return make_error_code(errc::invalid_request);
    }
    protocol::share_snapshot_key k;
    if (!k.decode(r, 0) || !r.ok()) {
        return make_error_code(errc::invalid_request);
    }
    decoded_key out;
    out.type = static_cast<record_type>(type);
    out.key = share_key{std::move(k.group_id), k.topic_id, k.partition};
    return out;
}

result<share_state> decode_snapshot(std::span<const uint8_t> value) {
    protocol::share_snapshot_value v;
    if (!read_value(value, v)) {
        return make_error_code(errc::invalid_request);
    }
    share_state s;
    s.snapshot_epoch = v.snapshot_epoch;
    s.state_epoch = v.state_epoch;
    s.leader_epoch = v.leader_epoch;
    s.start_offset = v.start_offset;
    s.delivery_complete_count = v.delivery_complete_count;
    s.create_timestamp = v.create_timestamp;
    s.write_timestamp = v.write_timestamp;
    s.batches = batches_of(v.state_batches);
    return s;
}

std::error_code apply_update(share_state& s, std::span<const uint8_t> value) {
    protocol::share_update_value v;
    if (!read_value(value, v)) {
        return make_error_code(errc::invalid_request);
    }
    s.leader_epoch = v.leader_epoch;
    if (v.start_offset != -1) {
        s.start_offset = v.start_offset;
    }
    if (v.delivery_complete_count != -1) {
        s.delivery_complete_count = v.delivery_complete_count;
    }
    auto updates = batches_of(v.state_batches);
    std::vector<state_batch> merged;
    // The old batches outside every update, cut where an update overlaps them.
    for (const auto& b : s.batches) {
        std::vector<state_batch> pieces{b};
        for (const auto& u : updates) {
            std::vector<state_batch> next;
            for (const auto& p : pieces) {
                if (u.last_offset < p.first_offset || u.first_offset > p.last_offset) {
                    next.push_back(p);
                    continue;
                }
                if (p.first_offset < u.first_offset) {
                    next.push_back({p.first_offset, u.first_offset - 1, p.delivery_state,
                                    p.delivery_count});
                }
                if (p.last_offset > u.last_offset) {
                    next.push_back({u.last_offset + 1, p.last_offset, p.delivery_state,
                                    p.delivery_count});
                }
            }
            pieces = std::move(next);
        }
        merged.insert(merged.end(), pieces.begin(), pieces.end());
    }
    merged.insert(merged.end(), updates.begin(), updates.end());
    std::erase_if(merged, [&](const state_batch& b) { return b.last_offset < s.start_offset; });
    for (auto& b : merged) {
        b.first_offset = std::max(b.first_offset, s.start_offset);
    }
    std::sort(merged.begin(), merged.end(), [](const state_batch& a, const state_batch& b) {
        return a.first_offset < b.first_offset;
    });
    s.batches = std::move(merged);
    return {};
}

std::string share_key::coordinator_key() const {
    return group + ":" + topic_id.to_string() + ":" + std::to_string(partition);
}

}  // namespace spool::broker::share
