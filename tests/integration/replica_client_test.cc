// replication::leader_client against a real spool-broker process: the connection a follower's
// replica fetcher opens to its leader. ApiVersions at connect, a Metadata round trip, and the
// follower's own requests (OffsetForLeaderEpoch v4; Fetch v12 with a replica id, refused for a
// node that is no replica) decoded with the generated codecs, records and all. A follower's
// fetch that is served: tests/cluster/cluster_replica_fetch_test.cc.

#include "broker/replication/fetched_records.h"
#include "broker/replication/leader_client.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/offset_for_leader_epoch.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/record_reader.h"
#include "tests/integration/test_support.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace spool::tests {
namespace {

namespace asio = boost::asio;
namespace repl = broker::replication;
using namespace std::chrono_literals;

// Runs one coroutine on a fresh io_context to completion (bounded).
template <class T>
std::optional<T> run_client(asio::awaitable<T> work) {
    asio::io_context io;
    std::optional<T> out;
    asio::co_spawn(io, std::move(work), [&out](std::exception_ptr e, T value) {
        if (!e) {
            out = std::move(value);
        }
    });
    io.run_for(20s);
    return out;
}

struct metadata_outcome {
    std::error_code connect;
    bool fetch_v12 = false;
    bool offset_for_leader_epoch_v4 = false;
    std::optional<protocol::metadata_response> metadata;
};

asio::awaitable<metadata_outcome> connect_and_describe(uint16_t port) {
    // Named first: the options hold a std::function, and GCC 12 destroys a temporary in a
    // co_await expression twice.
    const repl::leader_client_options options{.self = 5};
    repl::leader_client client(co_await asio::this_coro::executor, options);
    metadata_outcome out;
    repl::leader_endpoint where{"127.0.0.1", port};
    out.connect = co_await client.connect(where);
    if (out.connect) {
        co_return out;
    }
    out.fetch_v12 = client.supports(protocol::api_key::fetch, 12);
    out.offset_for_leader_epoch_v4 = client.supports(protocol::api_key::offset_for_leader_epoch, 4);
    protocol::metadata_request req;
    req.topics = std::nullopt;  // every topic
    auto r = co_await client.call<protocol::metadata_response>(req, 12, 5s);
    if (r) {
        out.metadata = std::move(r).value().body;
    }
    co_return out;
}

struct fetch_outcome {
    std::error_code error;
    int16_t epoch_error = -1;
    int32_t epoch = -2;
    int64_t epoch_end = -2;
    int16_t replica_fetch_error = -1;
    int16_t fetch_error = -1;
    int64_t high_watermark = -1;
    std::vector<std::string> values;
    size_t whole_bytes = 0;
    size_t record_bytes = 0;
};

asio::awaitable<fetch_outcome> ask_as_a_follower(uint16_t port, std::string topic) {
    // Named first: the options hold a std::function, and GCC 12 destroys a temporary in a
    // co_await expression twice.
    const repl::leader_client_options options{.self = 5};
    repl::leader_client client(co_await asio::this_coro::executor, options);
    fetch_outcome out;
    repl::leader_endpoint where{"127.0.0.1", port};
    if ((out.error = co_await client.connect(where))) {
        co_return out;
    }
    protocol::offset_for_leader_epoch_request oe;
    oe.replica_id = 5;
    auto& ot = oe.topics.emplace_back();
    ot.topic = topic;
    auto& op = ot.partitions.emplace_back();
    op.partition = 0;
    op.current_leader_epoch = -1;
    op.leader_epoch = 0;
    auto epochs = co_await client.call<protocol::offset_for_leader_epoch_response>(oe, 4, 5s);
    if (!epochs) {
        out.error = epochs.error();
        co_return out;
    }
    const auto& e = epochs.value().body.topics.at(0).partitions.at(0);
    out.epoch_error = e.error_code;
    out.epoch = e.leader_epoch;
    out.epoch_end = e.end_offset;

    // As follower 5 asks (v12: replica_id in the body). Node 5 is no replica of the partition:
    // the leader answers NOT_LEADER_OR_FOLLOWER, as Kafka does for an unknown replica.
    auto req = fetch_partition_0(topic, 0);
    req.replica_id = 5;
    auto refused = co_await client.call<protocol::fetch_response>(req, 12, 5s);
    if (!refused) {
        out.error = refused.error();
        co_return out;
    }
    out.replica_fetch_error = refused.value().body.responses.at(0).partitions.at(0).error_code;
    // The same Fetch v12 as a consumer: the records, decoded, on the same connection.
    req.replica_id = -1;
    auto resp = co_await client.call<protocol::fetch_response>(req, 12, 5s);
    if (!resp) {
        out.error = resp.error();
        co_return out;
    }
    const auto& pd = resp.value().body.responses.at(0).partitions.at(0);
    out.fetch_error = pd.error_code;
    out.high_watermark = pd.high_watermark;
    auto bytes = pd.records.bytes();
    out.record_bytes = bytes.size();
    out.whole_bytes = repl::whole_batches_size(bytes);
    // Every record, with its offset: the follower appends these batches as they are.
    protocol::records::decompress_buffer scratch;
    protocol::records::validate_options as_logged;
    as_logged.origin = protocol::records::batch_origin::log;
    protocol::records::batch_walker walker(bytes.first(out.whole_bytes), as_logged, scratch);
    while (!walker.done()) {
        auto b = walker.next();
        if (!b) {
            break;
        }
        protocol::records::record_reader reader(
            protocol::records::records_section(bytes, b.value()), b.value().record_count);
        protocol::records::record_view rv;
        while (reader.next(rv)) {
            out.values.push_back(std::to_string(b.value().base_offset + rv.offset_delta) + ":" +
                                 std::string(rv.value.bytes.begin(), rv.value.bytes.end()));
        }
    }
    co_return out;
}

class replica_client_test : public running_broker_test {};

TEST_F(replica_client_test, test_connect_reads_api_versions_and_metadata_round_trips) {
    auto out = run_client(connect_and_describe(broker->port()));
    ASSERT_TRUE(out);
    ASSERT_FALSE(out->connect) << out->connect.message();
    EXPECT_TRUE(out->fetch_v12);
    EXPECT_TRUE(out->offset_for_leader_epoch_v4);
    ASSERT_TRUE(out->metadata);
    ASSERT_EQ(out->metadata->brokers.size(), 1u);
    EXPECT_EQ(out->metadata->brokers[0].node_id, 0);
    EXPECT_EQ(out->metadata->brokers[0].port, broker->port());
}

TEST_F(replica_client_test, test_follower_requests_decode_and_a_non_replica_is_refused) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "replicated", 1), 0);
    for (int i = 0; i < 3; ++i) {
        auto batch = make_batch({"r" + std::to_string(2 * i), "r" + std::to_string(2 * i + 1)});
        auto resp = c.call<protocol::produce_request, protocol::produce_response>(
            9, produce_req("replicated", 0, batch, 1));
        ASSERT_TRUE(resp);
        ASSERT_EQ(resp->responses.at(0).partition_responses.at(0).error_code, 0);
    }
    auto out = run_client(ask_as_a_follower(broker->port(), "replicated"));
    ASSERT_TRUE(out);
    ASSERT_FALSE(out->error) << out->error.message();
    EXPECT_EQ(out->epoch_error, 0);
    EXPECT_EQ(out->epoch, 0);
    EXPECT_EQ(out->epoch_end, 6);
    EXPECT_EQ(out->replica_fetch_error, 6);  // NOT_LEADER_OR_FOLLOWER
    EXPECT_EQ(out->fetch_error, 0);
    EXPECT_EQ(out->high_watermark, 6);
    EXPECT_GT(out->record_bytes, 0u);
    EXPECT_EQ(out->whole_bytes, out->record_bytes);
    EXPECT_EQ(out->values,
              (std::vector<std::string>{"0:r0", "1:r1", "2:r2", "3:r3", "4:r4", "5:r5"}));
}

}  // namespace
}  // namespace spool::tests
