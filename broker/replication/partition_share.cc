// The share-group door of a partition (KIP-932): ShareFetch reads whole batches below the high
// watermark and acquires their records for one member in the group's share_partition; the
// acknowledgements finish them. See share_partition.h for the record states.

#include "broker/replication/partition.h"
#include "protocol/records/batch_format.h"

#include <unistd.h>

#include <array>
#include <chrono>

namespace spool::broker::replication {

namespace {

namespace bo = protocol::records::batch_offset;

int64_t steady_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

uint64_t be(const uint8_t* p, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
        v = (v << 8) | p[i];
    }
    return v;
}

struct batch_header {
    int64_t base_offset = 0;
    int64_t last_offset = 0;
    uint32_t size = 0;  // bytes of the whole batch
    bool control = false;
};

// The batches of one slice, from their fixed headers (read with pread: the slice is a range of
// a segment file, as the log handed it out). Stops at a short or unreadable header.
std::vector<batch_header> batches_of(const file_slice& s) {
    std::vector<batch_header> out;
    uint64_t pos = 0;
    std::array<uint8_t, bo::records> h{};
    while (pos + h.size() <= s.length) {
        auto n = ::pread(s.file->fd(), h.data(), h.size(), static_cast<off_t>(s.offset + pos));
        if (n != static_cast<ssize_t>(h.size())) {
            break;
        }
        batch_header b;
        b.base_offset = static_cast<int64_t>(be(h.data() + bo::base_offset, 8));
        const auto length = static_cast<uint32_t>(be(h.data() + bo::batch_length, 4));
        b.size = length + static_cast<uint32_t>(protocol::records::log_overhead);
        const auto attributes = static_cast<int16_t>(be(h.data() + bo::attributes, 2));
        b.control = (attributes & protocol::records::attribute::control) != 0;
        b.last_offset = b.base_offset +
                        static_cast<int32_t>(be(h.data() + bo::last_offset_delta, 4));
        if (pos + b.size > s.length) {
            break;
        }
        out.push_back(b);
        pos += b.size;
    }
    return out;
}

}  // namespace

share_partition& partition::share_state_for(const std::string& group, const share_limits& limits) {
    auto it = _share.find(group);
    if (it == _share.end()) {
        // share.auto.offset.reset: where a group without state here begins.
        const auto start = limits.reset_earliest ? _log->log_start_offset() : _log->high_watermark();
        it = _share.emplace(group, share_partition(start.value())).first;
    }
    return it->second;
}

const share_partition* partition::share_state(std::string_view group) const {
    auto it = _share.find(group);
    return it == _share.end() ? nullptr : &it->second;
}

result<partition::share_fetch_outcome> partition::share_fetch(const share_fetch_request& r) {
    if (auto ec = check_leader(-1)) {
        return ec;
    }
    auto& sp = share_state_for(r.group, r.limits);
    const int64_t now = steady_ms();
    sp.log_start_moved(_log->log_start_offset().value());
    sp.expire_locks(now, r.limits);
    share_fetch_outcome out;
    const auto hw = _log->high_watermark();
    int32_t budget = std::max(r.max_records, 1);
    auto next = sp.next_fetch_offset(r.limits);
    // Reads from the first record to acquire (a redelivery or the end offset); when what it
    // read is all held by others, on from there, a few reads at most per request.
    for (int reads = 0; reads < 8 && next && model::offset(*next) < hw && budget > 0; ++reads) {
        const uint32_t room = r.max_bytes > out.bytes ? r.max_bytes - out.bytes : 0;
        if (room == 0 && out.bytes > 0) {
            break;
        }
        SPOOL_TRY(data, _log->read(model::offset(*next), room, hw, out.bytes == 0));
        if (data.slices.empty()) {
            break;
        }
        int64_t after = *next;
        for (const auto& slice : data.slices) {
            uint64_t pos = 0;
            for (const auto& b : batches_of(slice)) {
                const int32_t got = sp.acquire_batch(b.base_offset, b.last_offset, b.control,
                                                     r.member, now, r.limits, budget,
                                                     out.acquired);
                if (got > 0) {
                    budget -= got;
                    file_slice part{slice.file, slice.offset + pos, b.size};
                    auto& last = out.slices;
                    if (!last.empty() && last.back().file == part.file &&
                        last.back().offset + last.back().length == part.offset) {
                        last.back().length += part.length;
                    } else {
                        last.push_back(part);
                    }
                    out.bytes += b.size;
                }
                pos += b.size;
                after = std::max(after, b.last_offset + 1);
            }
        }
        if (!out.acquired.empty()) {
            break;
        }
        next = after > *next ? std::optional<int64_t>(after) : std::nullopt;
    }
    return out;
}

result<uint64_t> partition::share_acknowledge(const std::string& group,
                                              const std::string& member,
                                              std::span<const share_ack_batch> batches,
                                              const share_limits& limits) {
    if (auto ec = check_leader(-1)) {
        return ec;
    }
    auto it = _share.find(group);
    if (it == _share.end()) {
        return make_error_code(errc::invalid_record_state);
    }
    it->second.expire_locks(steady_ms(), limits);
    auto version = it->second.acknowledge(member, batches, limits);
    if (!version) {
        return make_error_code(errc::invalid_record_state);
    }
    return *version;
}

void partition::share_release(const std::string& group, const std::string& member,
                              const share_limits& limits) {
    auto it = _share.find(group);
    if (it != _share.end()) {
        it->second.release_member(member, limits);
    }
}

result<std::optional<partition::share_summary>> partition::share_summary_of(
    const std::string& group, const share_limits& limits) {
    if (auto ec = check_leader(-1)) {
        return ec;
    }
    auto it = _share.find(group);
    if (it == _share.end()) {
        return std::optional<share_summary>{};
    }
    auto& sp = it->second;
    // What a fetch would see now: records below the log start are gone, expired locks released.
    sp.log_start_moved(_log->log_start_offset().value());
    sp.expire_locks(steady_ms(), limits);
    share_summary s;
    s.start_offset = sp.start_offset();
    s.delivery_complete_count = sp.delivery_complete_count();
    s.high_watermark = _log->high_watermark().value();
    s.leader_epoch = leader_epoch();
    return std::optional<share_summary>{s};
}

result<void> partition::share_initialize(const std::string& group, int64_t start_offset) {
    if (auto ec = check_leader(-1)) {
        return ec;
    }
    auto it = _share.find(group);
    const int32_t epoch = it == _share.end() ? 0 : it->second.state_epoch() + 1;
    _share.insert_or_assign(group, share_partition(start_offset, epoch));
    return success();
}

result<bool> partition::share_delete(const std::string& group) {
    if (auto ec = check_leader(-1)) {
        return ec;
    }
    auto it = _share.find(group);
    if (it == _share.end()) {
        return false;
    }
    _share.erase(it);
    return true;
}

result<bool> partition::share_restore(const std::string& group,
                                      const std::optional<share_persisted>& p,
                                      int32_t state_epoch, const share_limits& limits) {
    if (auto ec = check_leader(-1)) {
        return ec;
    }
    if (_share.contains(group)) {
        return false;
    }
    if (p) {
        _share.emplace(group, share_partition::restore(*p));
    } else {
        const auto start =
            limits.reset_earliest ? _log->log_start_offset() : _log->high_watermark();
        _share.emplace(group, share_partition(start.value(), state_epoch));
    }
    return true;
}

result<std::optional<partition::share_persist_view>> partition::share_persist_begin(
    const std::string& group, uint64_t target) {
    if (auto ec = check_leader(-1)) {
        return ec;
    }
    auto it = _share.find(group);
    if (it == _share.end()) {
        return std::optional<share_persist_view>{};
    }
    auto& sp = it->second;
    share_persist_view v;
    v.version = sp.version();
    v.durable = sp.durable_version();
    v.leader_epoch = leader_epoch();
    v.target = target != 0 ? target : v.version;
    if (target == 0) {
        if (v.durable >= v.version) {
            v.settled = int16_t{0};  // nothing to write
        }
    } else {
        v.settled = sp.outcome_of(target);
    }
    if (v.settled) {
        return std::optional<share_persist_view>{std::move(v)};
    }
    v.busy = sp.writing;
    if (!v.busy && v.durable < v.version) {
        sp.writing = true;
        v.state = sp.persisted();
    }
    return std::optional<share_persist_view>{std::move(v)};
}

void partition::share_persist_end(const std::string& group, uint64_t version, int16_t error) {
    auto it = _share.find(group);
    if (it == _share.end()) {
        return;
    }
    it->second.writing = false;
    it->second.persist_ended(version, error);
}

}  // namespace spool::broker::replication
