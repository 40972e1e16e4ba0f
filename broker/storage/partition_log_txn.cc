// partition_log: transactions. The producer state follows every batch (open transactions and
// their markers); an ABORT marker adds an entry to the aborted-transaction index of the segment
// it lands in (Kafka's LogSegment.updateTxnIndex); the last stable offset and the aborted
// transactions of a fetch range come from both.

#include "broker/storage/errc.h"
#include "broker/storage/partition_log.h"

#include <algorithm>

namespace spool::broker::storage {

model::offset partition_log::last_stable_offset() const {
    auto unstable = _producers.first_unstable_offset();
    return unstable ? std::max(_log_start, std::min(*unstable, _high_watermark)) : _high_watermark;
}

result<std::vector<aborted_txn>> partition_log::aborted_transactions(model::offset start,
                                                                     model::offset upper) const {
    std::vector<aborted_txn> out;
    if (_offline) {
        return make_error_code(errc::partition_offline);
    }
    // Kafka goes on to later segments until an entry's last stable offset reaches upper: a
    // transaction open across segments has its marker (and entry) in a later one.
    for (size_t i = segment_index_for(start); i < _segments.size(); ++i) {
        auto done = _segments[i]->txns().collect(start, upper, out);
        if (!done) {
            return read_failed(done.error());
        }
        if (done.value()) {
            break;
        }
    }
    return out;
}

result<void> partition_log::apply_producer(const batch_info& b, std::span<const uint8_t> bytes,
                                           segment& seg, bool index) {
    std::optional<txn_marker> marker;
    if (b.is_control() && b.has_producer()) {
        marker = read_txn_marker(bytes);
    }
    auto done = _producers.apply(b, marker ? &*marker : nullptr);
    if (!done || !done->aborted || !index) {
        return success();
    }
    return seg.txns().append(
        {done->pid, done->first_offset, done->last_offset, done->last_stable_offset});
}

}  // namespace spool::broker::storage
