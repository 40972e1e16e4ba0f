// Pins the txn::errc -> Kafka error mapping, and KIP-588's version split of PRODUCER_FENCED.

#include "broker/handlers/txn/txn_errors.h"
#include "broker/txn/errc.h"

#include <gtest/gtest.h>

namespace spool::broker::handlers::txn {
namespace {

using protocol::error_code;
using broker::txn::errc;

TEST(txn_errors, test_every_coordinator_error_has_kafkas_code) {
    auto map = [](errc e) { return txn_error(make_error_code(e), 3, 2); };
    EXPECT_EQ(txn_error({}, 3, 2), error_code::none);
    EXPECT_EQ(map(errc::not_coordinator), error_code::not_coordinator);
    EXPECT_EQ(map(errc::load_in_progress), error_code::coordinator_load_in_progress);
    EXPECT_EQ(map(errc::coordinator_not_available), error_code::coordinator_not_available);
    EXPECT_EQ(map(errc::invalid_producer_id_mapping), error_code::invalid_producer_id_mapping);
    EXPECT_EQ(map(errc::producer_fenced), error_code::producer_fenced);
    EXPECT_EQ(map(errc::concurrent_transactions), error_code::concurrent_transactions);
    EXPECT_EQ(map(errc::invalid_txn_state), error_code::invalid_txn_state);
    EXPECT_EQ(map(errc::invalid_transaction_timeout), error_code::invalid_transaction_timeout);
    EXPECT_EQ(map(errc::invalid_request), error_code::invalid_request);
    EXPECT_EQ(map(errc::storage_error), error_code::unknown_server_error);
    EXPECT_EQ(map(errc::transactional_id_not_found), error_code::transactional_id_not_found);
}

TEST(txn_errors, test_older_versions_get_invalid_producer_epoch_for_a_fence) {
    EXPECT_EQ(txn_error(make_error_code(errc::producer_fenced), 1, 2),
              error_code::invalid_producer_epoch);
    EXPECT_EQ(txn_error(make_error_code(errc::producer_fenced), 3, 4),
              error_code::invalid_producer_epoch);
    EXPECT_EQ(txn_error(make_error_code(errc::producer_fenced), 4, 4), error_code::producer_fenced);
}

}  // namespace
}  // namespace spool::broker::handlers::txn
