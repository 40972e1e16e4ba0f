#include "broker/coordinator/partition_group_log.h"

#include "broker/coordinator/errc.h"
#include "broker/storage/errc.h"
#include "broker/storage/file_ops.h"
#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/compression.h"
#include "protocol/records/record_reader.h"

namespace spool::broker::coordinator {

namespace {
// Bytes per read() during replay; a batch larger than this is still returned whole (min_one).
constexpr uint32_t replay_read_bytes = 1024 * 1024;
}  // namespace

void partition_group_log::append(std::vector<log_record> records, append_callback done) {
    append_batch(std::move(records), {}, std::move(done));
}

void partition_group_log::append_txn(std::vector<log_record> records, int64_t producer_id,
                                     int16_t producer_epoch, append_callback done) {
    replication::partition* p = _find();
    if (p == nullptr) {
        done(make_error_code(errc::not_coordinator));
        return;
    }
    rec::batch_options options;
    options.producer_id = producer_id;
    options.producer_epoch = producer_epoch;
    options.transactional = true;
    // The partition checks sequences per producer like a client's: continue after the last
    // batch this producer wrote here at this epoch (Kafka skips the check for coordinator
    // writes; Spool's append has no origin to tell them apart).
    options.base_sequence = 0;
    if (const auto* e = p->log().producers().find(model::producer_id(producer_id));
        e != nullptr && e->epoch == model::producer_epoch(producer_epoch) && e->last() != nullptr &&
        e->last()->last_seq.value() >= 0) {
        options.base_sequence =
            e->last()->last_seq.value() == INT32_MAX ? 0 : e->last()->last_seq.value() + 1;
    }
    // The partition refuses an older epoch than its producer state holds: the producer is fenced.
    auto fenced = [done = std::move(done)](std::error_code ec) {
        done(ec == storage::make_error_code(storage::errc::invalid_producer_epoch)
                 ? make_error_code(errc::invalid_producer_epoch)
                 : ec);
    };
    append_batch(std::move(records), options, std::move(fenced));
}

void partition_group_log::append_batch(std::vector<log_record> records, rec::batch_options options,
                                       append_callback done) {
    rec::batch_builder builder(options);
    const int64_t now = _clock.now().count();
    for (const auto& r : records) {
        builder.add(now, rec::nullable_bytes::of(std::span<const uint8_t>(r.key)),
                    r.value ? rec::nullable_bytes::of(std::span<const uint8_t>(*r.value))
                            : rec::nullable_bytes::null());
    }
    std::vector<uint8_t> batch;
    if (auto ec = builder.build(batch)) {
        done(ec);
        return;
    }
    replication::partition* p = _find();
    if (p == nullptr) {
        done(make_error_code(errc::not_coordinator));
        return;
    }
    auto appended = p->append_as_leader(batch, -1, _commit.min_insync);
    if (!appended) {
        done(appended.error());
        return;
    }
    auto deadline = std::chrono::steady_clock::now() + _commit.timeout;
    p->wait_committed(appended.value().last_offset + 1, deadline, _commit.min_insync,
                      [done = std::move(done)](std::error_code ec) {
                          // Leadership moved: the client finds the new coordinator.
                          done(ec == replication::errc::not_leader_or_follower
                                   ? make_error_code(errc::not_coordinator)
                                   : ec);
                      });
}

std::error_code partition_group_log::replay(const replay_fn& fn) {
    return replay_txn(fn, nullptr, nullptr);
}

std::error_code partition_group_log::replay_txn(const replay_fn& fn, const txn_record_fn& txn,
                                                const txn_marker_fn& marker) {
    replication::partition* p = _find();
    if (p == nullptr) {
        return make_error_code(errc::not_coordinator);
    }
    const storage::partition_log* log = &p->log();
    rec::validate_options opts;
    opts.origin = rec::batch_origin::log;
    rec::decompress_buffer scratch;
    std::vector<uint8_t> buffer;
    model::offset next = log->log_start_offset();
    const model::offset end = log->log_end_offset();
    while (next < end) {
        auto read = log->read(next, replay_read_bytes, end, true);
        if (!read) {
            return read.error();
        }
        if (read.value().slices.empty()) {
            break;  // read() steps over compaction gaps, so nothing is left below `end`
        }
        buffer.clear();
        for (const auto& s : read.value().slices) {
            size_t at = buffer.size();
            buffer.resize(at + s.length);
            ssize_t n = storage::file_ops::posix().pread_full(
                s.file->fd(), buffer.data() + at, s.length, static_cast<off_t>(s.offset));
            if (n != static_cast<ssize_t>(s.length)) {
                return storage::make_error_code(storage::errc::io_error);
            }
        }
        rec::batch_walker walker(buffer, opts, scratch);
        while (!walker.done()) {
            auto info = walker.next();
            if (!info) {
                return info.error();
            }
            const auto& b = info.value();
            if (b.last_offset() < next.value()) {
                continue;  // a batch before the requested start
            }
            const bool control = b.is_control();
            if (control && !marker) {
                continue;
            }
            auto records = b.is_compressed() ? scratch.data() : rec::records_section(buffer, b);
            rec::record_reader reader(records, b.record_count);
            rec::record_view r;
            const bool in_txn = b.is_transactional() && b.has_producer_id() && txn;
            while (reader.next(r)) {
                if (control) {
                    rec::control_marker m;
                    if (!rec::parse_control_record(r, m)) {
                        marker(b.producer_id, m.type == rec::control_type::commit);
                    }
                    break;  // a control batch holds one marker
                }
                if (r.key.is_null) {
                    continue;
                }
                std::optional<std::span<const uint8_t>> value;
                if (!r.value.is_null) {
                    value = r.value.bytes;
                }
                if (in_txn) {
                    txn(b.producer_id, r.key.bytes, value);
                } else {
                    fn(r.key.bytes, value);
                }
            }
            if (reader.error()) {
                return reader.error();
            }
        }
        if (read.value().next_offset <= next) {
            break;  // no progress: defensive against an empty read
        }
        next = read.value().next_offset;
    }
    return {};
}

}  // namespace spool::broker::coordinator
