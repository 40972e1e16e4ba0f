#include "broker/storage/errc.h"

#include <string>

namespace spool::broker::storage {
namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "spool.storage"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::ok:
                return "ok";
            case errc::offset_out_of_range:
                return "offset out of range";
            case errc::io_error:
                return "I/O error on the log directory";
            case errc::no_space:
                return "no space left on the log directory";
            case errc::partition_offline:
                return "partition offline after a storage error";
            case errc::corrupt_batch:
                return "corrupt record batch";
            case errc::message_too_large:
                return "record batch too large";
            case errc::out_of_order_sequence:
                return "out of order sequence number";
            case errc::invalid_producer_epoch:
                return "invalid producer epoch";
            case errc::invalid_argument:
                return "invalid argument";
            case errc::not_found:
                return "partition not found";
            case errc::already_exists:
                return "partition already exists";
            case errc::closed:
                return "log closed";
            case errc::too_many_open_files:
                return "Too many open files (RLIMIT_NOFILE reached; raise the open files limit)";
            case errc::invalid_txn_state:
                return "non-transactional write while the producer's transaction is ongoing";
            case errc::coordinator_fenced:
                return "transaction marker from an older coordinator epoch";
        }
        return "unknown storage error";
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const category c;
    return c;
}

}  // namespace spool::broker::storage
