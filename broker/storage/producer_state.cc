#include "broker/storage/producer_state.h"

#include "broker/storage/checkpoint_file.h"
#include "broker/storage/errc.h"
#include "broker/storage/layout.h"
#include "protocol/records/crc32c.h"

#include <algorithm>

namespace spool::broker::storage {

namespace fs = std::filesystem;

const producer_batch* producer_entry::find(model::sequence first, model::sequence last) const {
    for (uint8_t i = 0; i < count; ++i) {
        const auto& b = batches[(head + i) % retained];
        if (b.first_seq == first && b.last_seq == last) {
            return &b;
        }
    }
    return nullptr;
}

void producer_entry::add(const producer_batch& b) {
    if (count < retained) {
        batches[(head + count) % retained] = b;
        ++count;
    } else {
        batches[head] = b;
        head = static_cast<uint8_t>((head + 1) % retained);
    }
    last_timestamp = b.ts;
}

void producer_entry::bump_epoch(model::producer_epoch e) {
    if (e != epoch) {
        epoch = e;
        count = 0;
        head = 0;
    }
}

static bool in_sequence(model::sequence last, model::sequence next) {
    return int64_t(next.value()) == int64_t(last.value()) + 1 ||
           (next.value() == 0 && last.value() == INT32_MAX);
}

result<sequence_check> producer_state::check(const batch_info& b, const txn_marker* marker,
                                              verification_guard guard) {
    if (!b.has_producer()) {
        return sequence_check{};
    }
    // The newest knowledge about this producer: an earlier batch of this append, or the table.
    std::optional<model::producer_epoch> epoch;
    std::optional<model::sequence> last_seq;
    std::optional<bool> in_txn;
    for (auto it = _pending.rbegin(); it != _pending.rend(); ++it) {
        if (it->pid == b.pid) {
            epoch = it->epoch;
            in_txn = it->in_txn;
            if (it->last_seq.value() >= 0) {
                last_seq = it->last_seq;
            }
            break;
        }
    }
    const producer_entry* e = nullptr;
    if (auto it = _producers.find(b.pid); it != _producers.end()) {
        e = &it->second;
        if (!epoch) {
            epoch = e->epoch;
            in_txn = e->current_txn_first_offset.value() >= 0;
            if (e->epoch == b.producer_epoch && e->last()) {
                last_seq = e->last()->last_seq;
            }
        }
    }
    const bool open = in_txn.value_or(false);
    // Kafka's order: a duplicate is answered first, then the transaction verification, then the
    // producer's epoch and sequence.
    if (!b.is_control()) {
        if (e && e->epoch == b.producer_epoch) {
            if (const auto* dup = e->find(b.base_sequence, b.last_sequence())) {
                return sequence_check{sequence_verdict::duplicate, dup->first_offset,
                                      dup->last_offset};
            }
        }
        const auto vit = _verifying.find(b.pid);
        const verification_entry* v = vit == _verifying.end() ? nullptr : &vit->second;
        // Kafka's UnifiedLog.analyzeAndValidateProducerState: "Record was not part of an ongoing
        // transaction" unless the coordinator vouched for this entry.
        const bool open_here = open && epoch && *epoch == b.producer_epoch;
        if (guard && b.is_transactional() && !open_here && (v == nullptr || *guard != v->guard)) {
            return make_error_code(errc::invalid_txn_state);
        }
    }
    if (epoch && b.producer_epoch < *epoch) {
        return make_error_code(errc::invalid_producer_epoch);
    }
    auto record = [&](model::sequence seq, bool txn) {
        _pending.push_back({b.pid, b.producer_epoch, seq, txn});
    };
    if (b.is_control()) {
        if (marker && e && e->coordinator_epoch > marker->coordinator_epoch) {
            return make_error_code(errc::coordinator_fenced);
        }
        record(model::no_sequence, marker == nullptr && open);
        return sequence_check{};
    }
    if (open && !b.is_transactional()) {
        return make_error_code(errc::invalid_txn_state);
    }
    // Kafka's ProducerAppendInfo.checkSequence: a waiting lower sequence is not overtaken.
    if (const auto* v = verification(b.pid);
        v != nullptr && b.base_sequence.value() > v->lowest_seq.value()) {
        return make_error_code(errc::out_of_order_sequence);
    }
    if (!epoch || *epoch != b.producer_epoch) {
        // A new epoch starts at sequence 0; an unknown producer is taken at any sequence.
        if (b.base_sequence.value() != 0 && epoch && epoch->value() >= 0) {
            return make_error_code(errc::out_of_order_sequence);
        }
    } else if (last_seq && !in_sequence(*last_seq, b.base_sequence)) {
        return make_error_code(errc::out_of_order_sequence);
    }
    record(b.last_sequence(), open || b.is_transactional());
    return sequence_check{};
}

std::optional<completed_txn> producer_state::apply(const batch_info& b, const txn_marker* marker) {
    if (!b.has_producer()) {
        return std::nullopt;
    }
    if (b.is_transactional()) {
        // Written into the transaction (or a marker ended it): the verification is used up.
        _verifying.erase(b.pid);
    }
    auto& e = _producers[b.pid];
    if (b.producer_epoch > e.epoch || e.epoch == model::no_producer_epoch) {
        e.bump_epoch(b.producer_epoch);
    }
    if (b.is_control()) {
        e.last_timestamp = b.max_timestamp;
        if (marker == nullptr) {
            return std::nullopt;  // not a transaction marker we can read: only the epoch moves
        }
        e.coordinator_epoch = marker->coordinator_epoch;
        if (e.current_txn_first_offset.value() < 0) {
            return std::nullopt;  // nothing of this producer's transaction was written here
        }
        completed_txn done{b.pid, e.current_txn_first_offset, b.base_offset, {}, !marker->commit};
        _ongoing.erase(e.current_txn_first_offset);
        e.current_txn_first_offset = model::offset(-1);
        done.last_stable_offset = _ongoing.empty()
                                      ? b.base_offset + 1
                                      : std::min(_ongoing.begin()->first, b.base_offset + 1);
        _unreplicated[done.first_offset] = done.last_offset;
        return done;
    }
    e.add({b.base_sequence, b.last_sequence(), b.base_offset, b.last_offset(), b.max_timestamp});
    if (b.is_transactional() && e.current_txn_first_offset.value() < 0) {
        e.current_txn_first_offset = b.base_offset;
        _ongoing[b.base_offset] = b.pid;
    }
    return std::nullopt;
}

std::optional<model::offset> producer_state::first_unstable_offset() const {
    std::optional<model::offset> out;
    if (!_ongoing.empty()) {
        out = _ongoing.begin()->first;
    }
    if (!_unreplicated.empty() && (!out || _unreplicated.begin()->first < *out)) {
        out = _unreplicated.begin()->first;
    }
    return out;
}

void producer_state::on_high_watermark(model::offset hw) {
    std::erase_if(_unreplicated, [&](const auto& kv) { return kv.second < hw; });
}

void producer_state::rebuild_ongoing() {
    _ongoing.clear();
    for (const auto& [pid, e] : _producers) {
        if (e.current_txn_first_offset.value() >= 0) {
            _ongoing[e.current_txn_first_offset] = pid;
        }
    }
}

void producer_state::truncate_head(model::offset log_start) {
    // Kafka keeps a producer whose last batch is gone while its transaction is open: the marker
    // that closes it is still to come.
    std::erase_if(_producers, [&](const auto& kv) {
        const auto* last = kv.second.last();
        return last != nullptr && last->last_offset < log_start &&
               kv.second.current_txn_first_offset.value() < 0;
    });
    std::erase_if(_unreplicated, [&](const auto& kv) { return kv.second < log_start; });
    rebuild_ongoing();
}

uint64_t producer_state::start_verification(model::producer_id pid, model::sequence seq,
                                            model::producer_epoch epoch, model::timestamp now) {
    // Kafka's hasOngoingTransaction(producerId, producerEpoch): a transaction open under an
    // older epoch is not this one (a TV2 producer bumps its epoch at every EndTxn and may write
    // its next transaction before the previous one's marker lands here).
    if (const auto* e = find(pid);
        e && e->current_txn_first_offset.value() >= 0 && e->epoch == epoch) {
        return 0;
    }
    auto [it, created] = _verifying.try_emplace(pid);
    auto& v = it->second;
    if (created) {
        v = {_next_guard++, seq, epoch, now};
        return v.guard;
    }
    if (epoch == v.epoch && seq.value() < v.lowest_seq.value()) {
        v.lowest_seq = seq;
    }
    if (epoch > v.epoch) {
        v.epoch = epoch;
        v.lowest_seq = seq;
    }
    return v.guard;
}

const verification_entry* producer_state::verification(model::producer_id pid) const {
    auto it = _verifying.find(pid);
    return it == _verifying.end() ? nullptr : &it->second;
}

size_t producer_state::expire(model::timestamp cutoff) {
    // Kafka's removeExpiredProducers also drops verifications nobody finished.
    std::erase_if(_verifying, [&](const auto& kv) { return kv.second.created < cutoff; });
    // Kafka's isProducerExpired: never while a transaction is open.
    return std::erase_if(_producers, [&](const auto& kv) {
        return kv.second.last_timestamp < cutoff && kv.second.current_txn_first_offset.value() < 0;
    });
}

const producer_entry* producer_state::find(model::producer_id pid) const {
    auto it = _producers.find(pid);
    return it == _producers.end() ? nullptr : &it->second;
}

namespace {
constexpr size_t entry_bytes = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;
constexpr size_t header_bytes = 2 + 4 + 4;
}  // namespace

result<void> producer_state::write_snapshot(file_ops& ops, const fs::path& dir,
                                            model::offset offset, bool durable) const {
    std::vector<uint8_t> buf(header_bytes + entry_bytes * _producers.size());
    uint8_t* p = buf.data();
    rf::store_be16(p, 1);
    rf::store_be32(p + 6, static_cast<uint32_t>(_producers.size()));
    p += header_bytes;
    for (const auto& [pid, e] : _producers) {
        const auto* last = e.last();
        rf::store_be64(p, static_cast<uint64_t>(pid.value()));
        rf::store_be16(p + 8, static_cast<uint16_t>(e.epoch.value()));
        rf::store_be32(p + 10, static_cast<uint32_t>(last ? last->last_seq.value() : -1));
        rf::store_be64(p + 14, static_cast<uint64_t>(last ? last->last_offset.value() : -1));
        rf::store_be32(p + 22,
                       static_cast<uint32_t>(last ? last->last_offset - last->first_offset : 0));
        rf::store_be64(p + 26, static_cast<uint64_t>(e.last_timestamp.value()));
        rf::store_be32(p + 34, static_cast<uint32_t>(e.coordinator_epoch));
        rf::store_be64(p + 38, static_cast<uint64_t>(e.current_txn_first_offset.value()));
        p += entry_bytes;
    }
    uint32_t crc = rf::crc32c({buf.data() + 6, buf.size() - 6});
    rf::store_be32(buf.data() + 2, crc);
    return write_file_atomic(ops, layout::segment_path(dir, offset, layout::snapshot_suffix), buf,
                             durable);
}

result<void> producer_state::read_snapshot(const fs::path& file) {
    SPOOL_TRY(buf, read_file(file));
    if (buf.size() < header_bytes || rf::load_be16(buf.data()) != 1) {
        return make_error_code(errc::invalid_argument);
    }
    uint32_t crc = rf::load_be32(buf.data() + 2);
    uint32_t count = rf::load_be32(buf.data() + 6);
    if (rf::crc32c({buf.data() + 6, buf.size() - 6}) != crc ||
        buf.size() != header_bytes + uint64_t(count) * entry_bytes) {
        return make_error_code(errc::corrupt_batch);
    }
    clear();
    const uint8_t* p = buf.data() + header_bytes;
    for (uint32_t i = 0; i < count; ++i, p += entry_bytes) {
        model::producer_id pid(static_cast<int64_t>(rf::load_be64(p)));
        producer_entry e;
        e.epoch = model::producer_epoch(static_cast<int16_t>(rf::load_be16(p + 8)));
        auto last_seq = static_cast<int32_t>(rf::load_be32(p + 10));
        auto last_offset = static_cast<int64_t>(rf::load_be64(p + 14));
        auto delta = static_cast<int32_t>(rf::load_be32(p + 22));
        e.last_timestamp = model::timestamp(static_cast<int64_t>(rf::load_be64(p + 26)));
        e.coordinator_epoch = static_cast<int32_t>(rf::load_be32(p + 34));
        e.current_txn_first_offset = model::offset(static_cast<int64_t>(rf::load_be64(p + 38)));
        if (last_offset >= 0 && last_seq >= 0) {
            int64_t first_seq = int64_t(last_seq) - delta;
            if (first_seq < 0) {
                first_seq += int64_t(INT32_MAX) + 1;
            }
            e.add({model::sequence(static_cast<int32_t>(first_seq)), model::sequence(last_seq),
                   model::offset(last_offset - delta), model::offset(last_offset),
                   e.last_timestamp});
        }
        _producers[pid] = e;
    }
    _unreplicated.clear();
    rebuild_ongoing();
    return success();
}

std::vector<model::offset> producer_state::list_snapshots(const fs::path& dir) {
    std::vector<model::offset> out;
    std::error_code ec;
    for (const auto& de : fs::directory_iterator(dir, ec)) {
        if (auto o =
                layout::parse_offset_name(de.path().filename().string(), layout::snapshot_suffix)) {
            out.push_back(*o);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace spool::broker::storage
