// Incremental fetch sessions (KIP-227) on the wire, against the real spool-broker with two shards:
// the epochs a client walks through, and two fetches racing on one session from connections that
// live on different shards.

#include "protocol/messages/create_topics.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/produce.h"
#include "protocol/records/batch_builder.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;
namespace rec = spool::protocol::records;

constexpr int16_t fetch_version = 12;  // sessions (v7+), topics by name (< v13)
constexpr int16_t invalid_epoch = 71;  // INVALID_FETCH_SESSION_EPOCH
constexpr int16_t not_found = 70;      // FETCH_SESSION_ID_NOT_FOUND

class fetch_session_test : public ::testing::Test {
protected:
    void SetUp() override {
        broker = std::make_unique<broker_process>();
        // Two shards: consecutive connections land on different ones (round robin).
        broker->add_override("spool.cores=2");
        ASSERT_TRUE(broker->start()) << broker->log_text();
        kafka_client c(broker->port());
        pr::create_topics_request req;
        auto& t = req.topics.emplace_back();
        t.name = topic;
        t.num_partitions = 1;
        t.replication_factor = 1;
        req.timeout_ms = 5000;
        auto resp = c.call<pr::create_topics_request, pr::create_topics_response>(4, req);
        ASSERT_TRUE(resp.has_value());
        ASSERT_EQ(resp->topics.at(0).error_code, 0);
    }
    void TearDown() override {
        auto info = broker->stop();
        EXPECT_TRUE(info.exited) << broker->log_text();
        EXPECT_EQ(info.status, 0) << broker->log_text();
    }

    void produce(kafka_client& c, const std::string& value) {
        rec::batch_builder b(rec::batch_options{});
        b.add(0, rec::nullable_bytes::null(), rec::nullable_bytes::of(value));
        auto batch = b.build();
        pr::produce_request req;
        req.acks = 1;
        req.timeout_ms = 5000;
        auto& t = req.topic_data.emplace_back();
        t.name = topic;
        auto& p = t.partition_data.emplace_back();
        p.index = 0;
        p.records = pr::records_field::view(batch);
        auto resp = c.call<pr::produce_request, pr::produce_response>(7, req);
        ASSERT_TRUE(resp.has_value());
        ASSERT_EQ(resp->responses.at(0).partition_responses.at(0).error_code, 0);
    }

    // A fetch on session `id` at `epoch`; `offset` names partition 0 (nullopt: no partitions,
    // an incremental fetch with no changes).
    pr::fetch_request fetch_req(int32_t id, int32_t epoch, std::optional<int64_t> offset) const {
        pr::fetch_request req;
        req.max_wait_ms = 0;
        req.min_bytes = 0;
        req.max_bytes = 1 << 20;
        req.session_id = id;
        req.session_epoch = epoch;
        if (offset) {
            auto& t = req.topics.emplace_back();
            t.topic = topic;
            auto& p = t.partitions.emplace_back();
            p.partition = 0;
            p.fetch_offset = *offset;
            p.partition_max_bytes = 1 << 20;
        }
        return req;
    }

    pr::fetch_response fetch(kafka_client& c, int32_t id, int32_t epoch,
                             std::optional<int64_t> offset) {
        auto resp = c.call<pr::fetch_request, pr::fetch_response>(fetch_version,
                                                                  fetch_req(id, epoch, offset));
        EXPECT_TRUE(resp.has_value()) << broker->log_text();
        return resp.value_or(pr::fetch_response{});
    }

    // The records bytes the response carries for partition 0, or nullopt when it leaves it out.
    static std::optional<std::string> records_of(const pr::fetch_response& r) {
        for (const auto& t : r.responses) {
            for (const auto& p : t.partitions) {
                auto b = p.records.bytes();
                return std::string(b.begin(), b.end());
            }
        }
        return std::nullopt;
    }

    const std::string topic = "sessions";
    std::unique_ptr<broker_process> broker;
};

TEST_F(fetch_session_test, test_session_epochs_follow_kip227) {
    kafka_client c(broker->port());
    produce(c, "first");

    // A full fetch at epoch 0 opens a session; the answer carries its id and every partition.
    auto full = fetch(c, 0, 0, 0);
    ASSERT_EQ(full.error_code, 0);
    const int32_t id = full.session_id;
    ASSERT_NE(id, 0);
    ASSERT_TRUE(records_of(full));
    EXPECT_NE(records_of(full)->find("first"), std::string::npos);
    const int64_t hw = full.responses.at(0).partitions.at(0).high_watermark;

    // The client's first incremental fetch is at epoch 1 (the new offset, nothing new: no news).
    auto first = fetch(c, id, 1, hw);
    EXPECT_EQ(first.error_code, 0);
    EXPECT_EQ(first.session_id, id);
    EXPECT_FALSE(records_of(first));
    // The same epoch again is refused; the session survives it.
    EXPECT_EQ(fetch(c, id, 1, std::nullopt).error_code, invalid_epoch);
    EXPECT_EQ(fetch(c, id, 3, std::nullopt).error_code, invalid_epoch);

    // New data shows up in the next incremental fetch, read from the offset the session holds.
    produce(c, "second");
    auto news = fetch(c, id, 2, std::nullopt);
    EXPECT_EQ(news.error_code, 0);
    ASSERT_TRUE(records_of(news));
    EXPECT_NE(records_of(news)->find("second"), std::string::npos);
    EXPECT_EQ(records_of(news)->find("first"), std::string::npos);
    EXPECT_EQ(fetch(c, id, 3, std::nullopt).error_code, 0);

    EXPECT_EQ(fetch(c, id == 1 ? 2 : id - 1, 1, std::nullopt).error_code, not_found);
    EXPECT_EQ(fetch(c, 0, 4, std::nullopt).error_code, not_found);

    // Epoch -1 closes the session: a sessionless full fetch, then the id is gone.
    auto closing = fetch(c, id, -1, hw);
    EXPECT_EQ(closing.error_code, 0);
    EXPECT_EQ(closing.session_id, 0);
    EXPECT_TRUE(records_of(closing));
    EXPECT_EQ(fetch(c, id, 4, std::nullopt).error_code, not_found);
}

TEST_F(fetch_session_test, test_two_concurrent_fetches_with_the_same_epoch_one_is_accepted) {
    kafka_client a(broker->port());
    kafka_client b(broker->port());  // the other shard
    produce(a, "x");
    int32_t id = 0;
    int pairs = 0;
    int both_accepted = 0;
    int both_refused = 0;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int i = 0; i < 400 && std::chrono::steady_clock::now() < until; ++i) {
        // A fresh session each round (epoch 0 naming the old one closes it), opened through a.
        auto full = fetch(a, id, 0, 0);
        ASSERT_EQ(full.error_code, 0);
        id = full.session_id;
        ASSERT_NE(id, 0);
        // Both connections send the client's next fetch at once.
        a.send(fetch_version, fetch_req(id, 1, 1));
        b.send(fetch_version, fetch_req(id, 1, 1));
        auto ra = a.receive<pr::fetch_response>(fetch_version);
        auto rb = b.receive<pr::fetch_response>(fetch_version);
        ASSERT_TRUE(ra.has_value() && rb.has_value()) << broker->log_text();
        for (int16_t e : {ra->error_code, rb->error_code}) {
            EXPECT_TRUE(e == 0 || e == invalid_epoch) << e;
        }
        both_accepted += ra->error_code == 0 && rb->error_code == 0 ? 1 : 0;
        both_refused += ra->error_code != 0 && rb->error_code != 0 ? 1 : 0;
        ++pairs;
    }
    EXPECT_GE(pairs, 50);
    EXPECT_EQ(both_accepted, 0) << "of " << pairs << " pairs";
    EXPECT_EQ(both_refused, 0) << "of " << pairs << " pairs";
}

}  // namespace
}  // namespace spool::tests
