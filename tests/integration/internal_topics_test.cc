// __consumer_offsets against a real spool-broker process: clients may read it but neither write,
// delete, trim nor grow it, and committed offsets outlive every such attempt and a restart.

#include "protocol/messages/create_partitions.h"
#include "protocol/messages/delete_records.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/offset_fetch.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;

constexpr int16_t none = 0;
constexpr int16_t invalid_topic_exception = 17;
constexpr int16_t topic_authorization_failed = 29;
const std::string offsets_topic = "__consumer_offsets";

class internal_topics_test : public running_broker_test {
protected:
    // A simple consumer's commit (no generation): the error of the one partition.
    int16_t commit(const std::string& group, const std::string& topic, int64_t offset) {
        kafka_client c(broker->port());
        pr::offset_commit_request req;
        req.group_id = group;
        req.generation_id_or_member_epoch = -1;
        auto& t = req.topics.emplace_back();
        t.name = topic;
        auto& p = t.partitions.emplace_back();
        p.partition_index = 0;
        p.committed_offset = offset;
        auto resp = c.call<pr::offset_commit_request, pr::offset_commit_response>(7, req);
        return resp ? resp->topics.at(0).partitions.at(0).error_code : -999;
    }

    int64_t committed(const std::string& group, const std::string& topic) {
        kafka_client c(broker->port());
        pr::offset_fetch_request req;
        req.group_id = group;
        req.topics =
            std::vector<pr::offset_fetch_request::offset_fetch_request_topic>{{topic, {0}}};
        auto resp = c.call<pr::offset_fetch_request, pr::offset_fetch_response>(7, req);
        if (!resp || resp->error_code != 0 || resp->topics.empty()) {
            return -999;
        }
        return resp->topics.at(0).partitions.at(0).committed_offset;
    }

    // The log end offset of __consumer_offsets-<partition>.
    int64_t end_offset(int32_t partition) {
        kafka_client c(broker->port());
        pr::list_offsets_request req;
        req.replica_id = -1;
        auto& t = req.topics.emplace_back();
        t.name = offsets_topic;
        auto& p = t.partitions.emplace_back();
        p.partition_index = partition;
        p.timestamp = -1;  // latest
        auto resp = c.call<pr::list_offsets_request, pr::list_offsets_response>(5, req);
        return resp ? resp->topics.at(0).partitions.at(0).offset : -999;
    }
};

TEST_F(internal_topics_test, test_delete_topics_refuses_consumer_offsets_and_commits_survive) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "orders", 1), none);
    ASSERT_EQ(commit("app", "orders", 42), none);

    pr::delete_topics_request del;
    del.topic_names = {offsets_topic};
    del.timeout_ms = 5000;
    auto resp = c.call<pr::delete_topics_request, pr::delete_topics_response>(5, del);
    ASSERT_TRUE(resp.has_value());
    ASSERT_EQ(resp->responses.size(), 1u);
    EXPECT_EQ(resp->responses[0].error_code, topic_authorization_failed);
    ASSERT_TRUE(resp->responses[0].error_message.has_value());
    EXPECT_NE(resp->responses[0].error_message->find("internal"), std::string::npos);

    // The coordinator still has its log: a commit after the refused deletion is written.
    EXPECT_EQ(commit("app", "orders", 43), none);
    EXPECT_EQ(committed("app", "orders"), 43);

    auto info = broker->stop();
    ASSERT_TRUE(info.exited);
    ASSERT_EQ(info.status, 0) << broker->log_text();
    ASSERT_TRUE(broker->start()) << broker->log_text();
    EXPECT_EQ(committed("app", "orders"), 43);
    kafka_client after(broker->port());
    pr::metadata_request md;
    md.topics = std::vector<pr::metadata_request::metadata_request_topic>{{{}, offsets_topic, {}}};
    md.allow_auto_topic_creation = false;
    auto listed = after.call<pr::metadata_request, pr::metadata_response>(9, md);
    ASSERT_TRUE(listed.has_value());
    EXPECT_EQ(listed->topics.at(0).error_code, none);
    EXPECT_TRUE(listed->topics.at(0).is_internal);
    EXPECT_EQ(listed->topics.at(0).partitions.size(), 50u);
}

TEST_F(internal_topics_test, test_produce_to_consumer_offsets_is_refused_and_writes_nothing) {
    int64_t before = end_offset(0);
    ASSERT_GE(before, 0);
    kafka_client c(broker->port());
    auto resp = c.call<pr::produce_request, pr::produce_response>(
        7, produce_req(offsets_topic, 0, make_batch({"garbage"}), -1));
    ASSERT_TRUE(resp.has_value());
    const auto& pr0 = resp->responses.at(0).partition_responses.at(0);
    EXPECT_EQ(pr0.error_code, invalid_topic_exception);
    EXPECT_EQ(end_offset(0), before);
}

TEST_F(internal_topics_test, test_kcat_cannot_produce_into_consumer_offsets) {
    ASSERT_TRUE(have_kcat()) << "kcat is required (scripts/setup.sh --with-tests installs it)";
    int64_t before = end_offset(0);
    ASSERT_GE(before, 0);
    std::string out = run("echo garbage | timeout 30 kcat -P -b " + broker->bootstrap() + " -t " +
                          offsets_topic + " -p 0 -X message.send.max.retries=0 2>&1; echo rc=$?");
    EXPECT_NE(out.find("Invalid topic"), std::string::npos) << out;
    EXPECT_EQ(end_offset(0), before);
    // The group coordinator, which does write there, is unaffected.
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "orders", 1), none);
    EXPECT_EQ(commit("app", "orders", 7), none);
    EXPECT_EQ(committed("app", "orders"), 7);
}

TEST_F(internal_topics_test, test_delete_records_and_create_partitions_refuse_consumer_offsets) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "orders", 1), none);
    ASSERT_EQ(commit("app", "orders", 5), none);

    pr::delete_records_request dr;
    dr.timeout_ms = 5000;
    for (int32_t p = 0; p < 50; ++p) {
        if (p == 0) {
            dr.topics.emplace_back().name = offsets_topic;
        }
        dr.topics[0].partitions.push_back({p, -1, {}});
    }
    auto trimmed = c.call<pr::delete_records_request, pr::delete_records_response>(2, dr);
    ASSERT_TRUE(trimmed.has_value());
    ASSERT_EQ(trimmed->topics.at(0).partitions.size(), 50u);
    for (const auto& p : trimmed->topics.at(0).partitions) {
        EXPECT_EQ(p.error_code, invalid_topic_exception) << p.partition_index;
    }

    pr::create_partitions_request cp;
    cp.timeout_ms = 5000;
    auto& t = cp.topics.emplace_back();
    t.name = offsets_topic;
    t.count = 60;
    t.assignments = std::nullopt;
    auto grown = c.call<pr::create_partitions_request, pr::create_partitions_response>(3, cp);
    ASSERT_TRUE(grown.has_value());
    EXPECT_EQ(grown->results.at(0).error_code, topic_authorization_failed);

    // Nothing moved: the offsets are still there, and a restart finds 50 partitions again (a
    // different count makes the coordinator refuse to start).
    auto info = broker->stop();
    ASSERT_EQ(info.status, 0) << broker->log_text();
    ASSERT_TRUE(broker->start()) << broker->log_text();
    EXPECT_EQ(committed("app", "orders"), 5);
}

}  // namespace
}  // namespace spool::tests
