#include "broker/txn/errc.h"

#include <string>

namespace spool::broker::txn {

namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "txn"; }

    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::ok:
                return "ok";
            case errc::not_coordinator:
                return "not the coordinator for this transactional id";
            case errc::load_in_progress:
                return "the transaction coordinator is loading";
            case errc::coordinator_not_available:
                return "transaction coordinator not available";
            case errc::invalid_producer_id_mapping:
                return "the producer id does not match the transactional id";
            case errc::producer_fenced:
                return "producer fenced by a newer epoch";
            case errc::concurrent_transactions:
                return "a state change of the transaction is in progress";
            case errc::invalid_txn_state:
                return "invalid transaction state for this request";
            case errc::invalid_transaction_timeout:
                return "invalid transaction timeout";
            case errc::invalid_request:
                return "invalid request";
            case errc::storage_error:
                return "writing the transaction state failed";
            case errc::transactional_id_not_found:
                return "transactional id not found";
        }
        return "unknown txn error";
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const category c;
    return c;
}

}  // namespace spool::broker::txn
