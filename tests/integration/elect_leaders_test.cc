// ElectLeaders (API 43) on one real spool-broker process (embedded metadata): every partition's
// only replica leads it, so each election named is ELECTION_NOT_NEEDED, an election for every
// partition lists none, and bad input gets Kafka 4.x's answers (UNKNOWN_TOPIC_OR_PARTITION,
// INVALID_REQUEST for an unknown election type, at the top level and per partition).

#include "protocol/messages/elect_leaders.h"

#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;

constexpr int16_t unknown_topic_or_partition = 3;
constexpr int16_t invalid_request = 42;
constexpr int16_t election_not_needed = 84;

class elect_leaders_test : public running_broker_test {
protected:
    void SetUp() override {
        running_broker_test::SetUp();
        kafka_client c(broker->port());
        ASSERT_EQ(create_topic(c, "two", 2), 0);
    }

    std::optional<pr::elect_leaders_response> elect(
        int16_t version, int8_t type,
        std::optional<std::map<std::string, std::vector<int32_t>>> named) {
        kafka_client c(broker->port());
        c.set_read_timeout(std::chrono::seconds(10));
        pr::elect_leaders_request req;
        req.election_type = type;
        req.timeout_ms = 5000;
        if (named) {
            for (const auto& [topic, partitions] : *named) {
                req.topic_partitions->push_back({topic, partitions, {}});
            }
        } else {
            req.topic_partitions.reset();
        }
        return c.call<pr::elect_leaders_request, pr::elect_leaders_response>(version, req);
    }
};

// topic -> partition -> (error code, message)
std::map<std::string, std::map<int32_t, std::pair<int16_t, std::string>>> by_partition(
    const pr::elect_leaders_response& r) {
    std::map<std::string, std::map<int32_t, std::pair<int16_t, std::string>>> out;
    for (const auto& t : r.replica_election_results) {
        for (const auto& p : t.partition_result) {
            out[t.topic][p.partition_id] = {p.error_code, p.error_message.value_or("<null>")};
        }
    }
    return out;
}

TEST_F(elect_leaders_test, test_named_partitions_need_no_election_on_one_broker) {
    for (int16_t version : {0, 1, 2}) {
        for (int8_t type : {0, 1}) {
            if (version == 0 && type == 1) {
                continue;  // v0 has no election type
            }
            auto r = elect(version, type, {{{"two", {0, 1, 7}}, {"missing", {0}}}});
            ASSERT_TRUE(r) << "v" << version;
            EXPECT_EQ(r->error_code, 0);
            auto got = by_partition(*r);
            EXPECT_EQ(got["two"][0], std::make_pair(election_not_needed,
                                                    std::string("Leader election not needed for "
                                                                "topic partition.")));
            EXPECT_EQ(got["two"][1].first, election_not_needed);
            EXPECT_EQ(got["two"][7], std::make_pair(unknown_topic_or_partition,
                                                    std::string("No such partition as two-7")));
            EXPECT_EQ(got["missing"][0], std::make_pair(unknown_topic_or_partition,
                                                        std::string("No such topic as missing")));
        }
    }
}

TEST_F(elect_leaders_test, test_every_partition_lists_each_topic_with_nothing_elected) {
    auto r = elect(2, 0, std::nullopt);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->error_code, 0);
    bool listed = false;
    for (const auto& t : r->replica_election_results) {
        listed = listed || t.topic == "two";
        EXPECT_TRUE(t.partition_result.empty()) << t.topic << ": not-needed ones are left out";
    }
    EXPECT_TRUE(listed);
    // An empty list (not null) asks for nothing.
    r = elect(2, 0, std::map<std::string, std::vector<int32_t>>{});
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->replica_election_results.empty());
}

TEST_F(elect_leaders_test, test_unknown_election_type_is_invalid_request_everywhere) {
    auto r = elect(1, 2, {{{"two", {0, 1}}}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->error_code, invalid_request);
    auto got = by_partition(*r);
    EXPECT_EQ(got["two"][0],
              std::make_pair(invalid_request, std::string("Unknown election type 2")));
    EXPECT_EQ(got["two"][1].first, invalid_request);
    // The broker is still serving.
    EXPECT_TRUE(elect(2, 0, {{{"two", {0}}}}));
}

}  // namespace
}  // namespace spool::tests
