#pragma once

// The aborted-transaction index of one segment, `<base>.txnindex` (Kafka's TransactionIndex):
// one entry per transaction whose ABORT marker is in the segment, appended when the marker is.
//
//   entry (34 bytes, big endian, back to back, no header):
//     version int16 (0) | producer_id int64 | first_offset int64 | last_offset int64 |
//     last_stable_offset int64
//
// first_offset is the transaction's first offset in this partition (maybe in an earlier
// segment), last_offset the marker's, last_stable_offset the LSO right after the marker (the
// first offset of the earliest transaction still open then, else last_offset + 1). A fetch with
// read_committed collects the entries overlapping its range (collect(), Kafka's
// collectAbortableTxns): the last_stable_offset tells when later segments cannot hold more.
//
// The file exists only once an entry is written (Kafka's lazy creation). Entries are few (one
// per aborted transaction), so they are kept in memory once read, and writes go through
// file_ops at the end of the file; the descriptor stays open until the owner has it synced
// (sync_handle(), release()). Recovery rebuilds the index of every segment it scans (reset(),
// then the markers' replay appends again).
//
// Threading: owned by one segment, single-threaded; the flusher sees only sync_handle().

#include "broker/model/ids.h"
#include "broker/storage/file_ops.h"
#include "common/file_slice.h"
#include "common/result.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace spool::broker::storage {

struct aborted_txn {
    model::producer_id pid;
    model::offset first_offset;
    model::offset last_offset;
    model::offset last_stable_offset;

    bool operator==(const aborted_txn&) const = default;
};

class txn_index {
public:
    static constexpr size_t entry_bytes = 34;

    txn_index(file_ops& ops, std::filesystem::path path) : _ops(ops), _path(std::move(path)) {}

    // Appends one entry (creating the file on the first). Errors: io_error / no_space.
    result<void> append(const aborted_txn& t);
    // Every entry, read from the file on first use. A torn last entry (a crash mid-write) is
    // ignored; corrupt_batch for an entry with another version.
    result<const std::vector<aborted_txn>*> entries() const;
    // Kafka's collectAbortableTxns: adds the entries with last_offset >= fetch_offset and
    // first_offset < upper to out. Returns true when an entry's last_stable_offset reaches upper
    // (no later segment can hold more for this range).
    result<bool> collect(model::offset fetch_offset, model::offset upper,
                         std::vector<aborted_txn>& out) const;
    // Drops entries whose marker is at or after o (Kafka's TransactionIndex.truncateTo).
    result<void> truncate_to(model::offset o);
    // Empties the index and deletes its file (recovery rebuilds it).
    result<void> reset();
    // The open descriptor to fdatasync (null when nothing was written since the last release).
    [[nodiscard]] std::shared_ptr<file_handle> sync_handle() const { return _file; }
    // fdatasync now, if a descriptor is held.
    result<void> sync();
    // Lets go of the descriptor (its writes are on disk).
    void release() { _file.reset(); }
    // Renames the file by appending suffix (no-op without a file) / removes path + suffix.
    result<void> rename(std::string_view suffix);
    void remove(std::string_view suffix = {});
    [[nodiscard]] const std::filesystem::path& path() const { return _path; }

private:
    result<void> open_for_append();

    file_ops& _ops;
    std::filesystem::path _path;
    std::shared_ptr<file_handle> _file;
    // Loaded on first use (mutable: a cache behind const lookups).
    mutable std::optional<std::vector<aborted_txn>> _entries;
};

// Encodes/decodes one entry (exactly entry_bytes).
void encode_aborted_txn(const aborted_txn& t, uint8_t* out);
aborted_txn decode_aborted_txn(const uint8_t* in);

}  // namespace spool::broker::storage
