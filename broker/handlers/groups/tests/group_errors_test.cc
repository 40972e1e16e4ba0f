// Pins the coordinator -> Kafka error mapping: clients react to these exact numbers.

#include "broker/handlers/groups/group_errors.h"

#include "broker/coordinator/errc.h"
#include "broker/storage/errc.h"

#include <gtest/gtest.h>

namespace spool::broker::handlers::groups {
namespace {

using coordinator::errc;

TEST(group_errors, test_coordinator_errors_map_to_kafka_numbers) {
    const std::pair<errc, int16_t> expected[] = {
        {errc::ok, 0},
        {errc::load_in_progress, 14},
        {errc::coordinator_not_available, 15},
        {errc::not_coordinator, 16},
        {errc::illegal_generation, 22},
        {errc::inconsistent_group_protocol, 23},
        {errc::invalid_group_id, 24},
        {errc::unknown_member_id, 25},
        {errc::invalid_session_timeout, 26},
        {errc::rebalance_in_progress, 27},
        {errc::offset_metadata_too_large, 12},
        {errc::non_empty_group, 68},
        {errc::group_id_not_found, 69},
        {errc::member_id_required, 79},
        {errc::group_max_size_reached, 81},
        {errc::fenced_instance_id, 82},
        {errc::group_subscribed_to_topic, 86},
        {errc::storage_error, 15},
        {errc::unknown_topic_or_partition, 3},
        {errc::unstable_offset_commit, 88},
        {errc::invalid_producer_epoch, 47},
    };
    for (auto [e, code] : expected) {
        EXPECT_EQ(kafka_code(make_error_code(e)), code) << make_error_code(e).message();
    }
}

TEST(group_errors, test_no_error_and_foreign_errors) {
    EXPECT_EQ(kafka_code(std::error_code{}), 0);
    // A storage error escaping the coordinator uses the broker-wide mapping.
    EXPECT_EQ(kafka_code(storage::make_error_code(storage::errc::io_error)), 56);
}

}  // namespace
}  // namespace spool::broker::handlers::groups
