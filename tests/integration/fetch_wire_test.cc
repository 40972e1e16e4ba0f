// Fetch on the wire, against the real spool-broker with two shards: incremental fetch sessions
// (KIP-227: the epochs a client walks through, two fetches racing on one session from connections
// on different shards) and the size limits of an answer (as Kafka applies them).

#include "protocol/messages/create_topics.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/produce.h"
#include "protocol/records/batch_builder.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;
namespace rec = spool::protocol::records;

constexpr int16_t fetch_version = 12;  // sessions (v7+), topics by name (< v13)
constexpr int16_t invalid_epoch = 71;  // INVALID_FETCH_SESSION_EPOCH
constexpr int16_t not_found = 70;      // FETCH_SESSION_ID_NOT_FOUND

class fetch_wire_test : public running_broker_test {
protected:
    // Two shards: consecutive connections land on different ones (round robin).
    std::vector<std::string> overrides() const override { return {"spool.cores=2"}; }
    void SetUp() override {
        running_broker_test::SetUp();
        if (HasFatalFailure()) {
            return;
        }
        kafka_client c(broker->port());
        create(c, topic, 1);
    }
    void create(kafka_client& c, const std::string& name, int32_t partitions) {
        ASSERT_EQ(create_topic(c, name, partitions), 0);
    }

    void produce(kafka_client& c, const std::string& value) { produce(c, topic, 0, {value}); }

    // One batch of `values` to topic/partition.
    void produce(kafka_client& c, const std::string& to, int32_t partition,
                 const std::vector<std::string>& values) {
        rec::batch_builder b(rec::batch_options{});
        for (const auto& v : values) {
            b.add(0, rec::nullable_bytes::null(), rec::nullable_bytes::of(v));
        }
        auto batch = b.build();
        pr::produce_request req;
        req.acks = 1;
        req.timeout_ms = 5000;
        auto& t = req.topic_data.emplace_back();
        t.name = to;
        auto& p = t.partition_data.emplace_back();
        p.index = partition;
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
};

TEST_F(fetch_wire_test, test_session_epochs_follow_kip227) {
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

TEST_F(fetch_wire_test, test_two_concurrent_fetches_with_the_same_epoch_one_is_accepted) {
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

// Kafka's limits on an answer: a partition gets whole batches up to its partition_max_bytes and
// the request's max_bytes, except that the first partition with data gets its first batch even
// when that batch alone is bigger (KIP-74); Spool stops at a batch boundary where Kafka cuts the
// slice mid-batch (the client drops the partial batch), so it never sends more than Kafka.
TEST_F(fetch_wire_test, test_answers_honour_partition_and_request_max_bytes) {
    kafka_client c(broker->port());
    create(c, "limits", 2);
    const std::vector<std::string> values(40, std::string(1000, 'v'));  // ~40 KB batches
    for (int i = 0; i < 3; ++i) {
        produce(c, "limits", 0, values);
    }
    produce(c, "limits", 1, values);
    // Records bytes per partition for one sessionless fetch with these limits.
    auto read = [&](int32_t request_max, int32_t p0_max, int32_t p1_max) {
        pr::fetch_request req;
        req.max_wait_ms = 0;
        req.max_bytes = request_max;
        req.session_epoch = -1;
        auto& t = req.topics.emplace_back();
        t.topic = "limits";
        for (auto [p, max] : {std::pair{0, p0_max}, std::pair{1, p1_max}}) {
            if (max > 0) {
                auto& fp = t.partitions.emplace_back();
                fp.partition = p;
                fp.partition_max_bytes = max;
            }
        }
        auto resp = c.call<pr::fetch_request, pr::fetch_response>(fetch_version, req);
        std::vector<size_t> sizes(2, 0);
        EXPECT_TRUE(resp.has_value());
        for (const auto& tr : resp.value_or(pr::fetch_response{}).responses) {
            for (const auto& pd : tr.partitions) {
                EXPECT_EQ(pd.error_code, 0);
                sizes.at(pd.partition_index) = pd.records.bytes().size();
            }
        }
        return sizes;
    };
    const size_t all = read(1 << 20, 1 << 20, 0)[0];
    const size_t batch = read(1 << 20, 1, 0)[0];  // min-one: the first batch, though over 1 byte
    ASSERT_GT(batch, 40'000u);
    ASSERT_EQ(all, 3 * batch);
    // Two batches fit in 100,000 bytes, the third does not.
    EXPECT_EQ(read(1 << 20, 100'000, 0)[0], 2 * batch);
    // The request's max_bytes: partition 0 takes one batch; what is left is too small for
    // partition 1's batch, and min-one no longer applies once a partition returned data.
    auto shared = read(static_cast<int32_t>(batch + batch / 2), 1 << 20, 1 << 20);
    EXPECT_EQ(shared[0], batch);
    EXPECT_EQ(shared[1], 0u);
    // A request max_bytes below the first batch still returns that batch (KIP-74), and no more.
    shared = read(10, 1 << 20, 1 << 20);
    EXPECT_EQ(shared[0], batch);
    EXPECT_EQ(shared[1], 0u);
}

}  // namespace
}  // namespace spool::tests
