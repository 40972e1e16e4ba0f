#include "broker/handlers/response_errors.h"

#include "protocol/messages/all.h"

#include <gtest/gtest.h>

namespace spool::broker::handlers {
namespace {

using namespace spool::protocol;

TEST(response_errors, test_clean_responses_carry_no_error) {
    produce_response produce;
    produce.responses.emplace_back().partition_responses.resize(3);
    EXPECT_FALSE(carries_error(produce));
    fetch_response fetch;
    fetch.responses.emplace_back().partitions.resize(2);
    EXPECT_FALSE(carries_error(fetch));
    EXPECT_FALSE(carries_error(api_versions_response{}));
}

TEST(response_errors, test_top_level_error) {
    fetch_response fetch;
    fetch.error_code = 70;  // FETCH_SESSION_ID_NOT_FOUND
    EXPECT_TRUE(carries_error(fetch));
    api_versions_response versions;
    versions.error_code = 35;
    EXPECT_TRUE(carries_error(versions));
}

TEST(response_errors, test_partition_level_errors) {
    produce_response produce;
    auto& parts = produce.responses.emplace_back().partition_responses;
    parts.resize(3);
    parts[2].error_code = 3;
    EXPECT_TRUE(carries_error(produce));

    fetch_response fetch;
    fetch.responses.emplace_back().partitions.resize(2);
    fetch.responses.emplace_back().partitions.resize(2);
    fetch.responses[1].partitions[1].error_code = 1;
    EXPECT_TRUE(carries_error(fetch));

    metadata_response metadata;
    metadata.topics.emplace_back().partitions.emplace_back().error_code = 5;
    EXPECT_TRUE(carries_error(metadata));
}

TEST(response_errors, test_entries_under_other_collection_names) {
    create_topics_response create;
    create.topics.emplace_back().error_code = 36;
    EXPECT_TRUE(carries_error(create));
    delete_topics_response del;
    del.responses.emplace_back().error_code = 3;
    EXPECT_TRUE(carries_error(del));
    describe_configs_response configs;
    configs.results.emplace_back().error_code = 3;
    EXPECT_TRUE(carries_error(configs));
    offset_fetch_response offsets;
    offsets.groups.emplace_back().topics.emplace_back().partitions.emplace_back().error_code = 3;
    EXPECT_TRUE(carries_error(offsets));
    leave_group_response leave;
    leave.members.emplace_back().error_code = 25;
    EXPECT_TRUE(carries_error(leave));
}

}  // namespace
}  // namespace spool::broker::handlers
