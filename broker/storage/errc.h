#pragma once

// Storage errors. The Kafka handlers translate these into Kafka error codes (a test in handlers/
// pins the mapping); storage itself never speaks Kafka error numbers.

#include <system_error>

namespace spool::broker::storage {

enum class errc : int {
    ok = 0,
    offset_out_of_range = 1,     // fetch/list offset below log start or above log end
    io_error = 2,                // a read/write/fsync failed; the partition is now offline
    no_space = 3,                // ENOSPC/EFBIG while writing; the partition is now offline
    partition_offline = 4,       // an earlier I/O error took the partition offline
    corrupt_batch = 5,           // a batch failed length/CRC/magic checks
    message_too_large = 6,       // a batch exceeds max.message.bytes or the segment size
    out_of_order_sequence = 7,   // idempotence: a gap or an unexpected first sequence
    invalid_producer_epoch = 8,  // idempotence: an epoch older than the one recorded
    invalid_argument = 9,        // caller error (e.g. delete_records beyond the high watermark)
    not_found = 10,              // no such partition
    already_exists = 11,         // create of an existing partition
    closed = 12,                 // the log was closed (shutdown) before the operation finished
    too_many_open_files = 13,    // EMFILE/ENFILE opening a segment or index: raise RLIMIT_NOFILE
    invalid_txn_state = 14,      // a non-transactional batch while the producer's txn is open
    coordinator_fenced = 15,     // a marker from an older transaction coordinator epoch
};

const std::error_category& error_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), error_category()};
}

// Maps an errno from a failed write to the storage error that takes the partition offline.
inline errc errc_from_errno(int e) noexcept {
    if (e == EMFILE || e == ENFILE) {
        return errc::too_many_open_files;  // said as such: the fix is the limit, not the disk
    }
    return (e == ENOSPC || e == EFBIG || e == EDQUOT) ? errc::no_space : errc::io_error;
}

}  // namespace spool::broker::storage

// SPOOL_STORAGE_ASSIGN(lhs, expr): assigns expr's value to an existing lhs or returns its error.
// (SPOOL_TRY(x, expr) declares a new `auto&& x`; Boost 1.74's TRY cannot assign.)
#define SPOOL_STORAGE_ASSIGN(lhs, expr)    \
    do {                                   \
        auto _spool_r = (expr);            \
        if (!_spool_r) {                   \
            return _spool_r.error();       \
        }                                  \
        lhs = std::move(_spool_r).value(); \
    } while (0)

template <>
struct std::is_error_code_enum<spool::broker::storage::errc> : std::true_type {};
