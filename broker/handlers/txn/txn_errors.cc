#include "broker/handlers/txn/txn_errors.h"

#include "broker/txn/errc.h"

namespace spool::broker::handlers::txn {

protocol::error_code txn_error(std::error_code ec, int16_t version, int16_t fenced_since) {
    using protocol::error_code;
    using broker::txn::errc;
    if (!ec) {
        return error_code::none;
    }
    if (ec.category() != broker::txn::error_category()) {
        return error_code::unknown_server_error;
    }
    switch (static_cast<errc>(ec.value())) {
        case errc::ok:
            return error_code::none;
        case errc::not_coordinator:
            return error_code::not_coordinator;
        case errc::load_in_progress:
            return error_code::coordinator_load_in_progress;
        case errc::coordinator_not_available:
            return error_code::coordinator_not_available;
        case errc::invalid_producer_id_mapping:
            return error_code::invalid_producer_id_mapping;
        case errc::producer_fenced:
            return version >= fenced_since ? error_code::producer_fenced
                                           : error_code::invalid_producer_epoch;
        case errc::concurrent_transactions:
            return error_code::concurrent_transactions;
        case errc::invalid_txn_state:
            return error_code::invalid_txn_state;
        case errc::invalid_transaction_timeout:
            return error_code::invalid_transaction_timeout;
        case errc::invalid_request:
            return error_code::invalid_request;
        case errc::storage_error:
            return error_code::unknown_server_error;
        case errc::transactional_id_not_found:
            return error_code::transactional_id_not_found;
    }
    return error_code::unknown_server_error;
}

}  // namespace spool::broker::handlers::txn
