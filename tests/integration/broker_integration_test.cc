// Integration tests of the spool-broker process: the real binary on a free port with a fresh data
// directory, driven over raw sockets (bad input, framing) and with kcat (real client round trips).

#include "protocol/messages/api_versions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/init_producer_id.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/produce.h"
#include "protocol/records/batch_builder.h"
#include "protocol/records/crc32c.h"
#include "tests/integration/broker_process.h"
#include "tests/integration/kafka_client.h"
#include "tests/integration/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

namespace spool::tests {
namespace {

namespace pr = spool::protocol;
namespace rec = spool::protocol::records;

class broker_test : public ::testing::Test {
protected:
    void SetUp() override {
        broker = std::make_unique<broker_process>();
        ASSERT_TRUE(broker->start()) << broker->log_text();
    }
    void TearDown() override {
        if (broker) {
            auto info = broker->stop();
            EXPECT_TRUE(info.exited) << broker->log_text();
            EXPECT_EQ(info.status, 0) << broker->log_text();
        }
    }

    // A fresh request on a new connection still works: the broker kept serving.
    void expect_serving() {
        kafka_client c(broker->port());
        auto resp = c.call<pr::api_versions_request, pr::api_versions_response>(
            3, pr::api_versions_request{});
        ASSERT_TRUE(resp.has_value()) << broker->log_text();
        EXPECT_EQ(resp->error_code, 0);
    }

    std::unique_ptr<broker_process> broker;
};

TEST_F(broker_test, test_api_versions_advertises_what_clients_need) {
    kafka_client c(broker->port());
    auto resp =
        c.call<pr::api_versions_request, pr::api_versions_response>(3, pr::api_versions_request{});
    ASSERT_TRUE(resp.has_value());
    auto find = [&](pr::api_key k) {
        auto it = std::find_if(resp->api_keys.begin(), resp->api_keys.end(),
                               [&](const auto& a) { return a.api_key == int16_t(k); });
        return it == resp->api_keys.end() ? nullptr : &*it;
    };
    ASSERT_NE(find(pr::api_key::produce), nullptr);
    EXPECT_EQ(find(pr::api_key::produce)->min_version, 0);  // librdkafka compression (KAFKA-18659)
    EXPECT_GE(find(pr::api_key::produce)->max_version, 7);  // zstd
    EXPECT_LE(find(pr::api_key::fetch)->min_version, 4);
    EXPECT_GE(find(pr::api_key::fetch)->max_version, 10);
    EXPECT_EQ(find(pr::api_key::find_coordinator)->min_version, 0);  // librdkafka LZ4 gate
    ASSERT_NE(find(pr::api_key::init_producer_id), nullptr);
    // metadata.version (docs/upgrades.md): supported 32-33, and a new store bootstraps at 33.
    // KIP-890 part 2: transaction.version supported 0-2 and finalized at
    // spool.transaction.version (default 2), so Kafka 4.x clients use transactions v2.
    ASSERT_EQ(resp->supported_features.size(), 2u);
    EXPECT_EQ(resp->supported_features[0].name, "metadata.version");
    EXPECT_EQ(resp->supported_features[0].min_version, 32);
    EXPECT_EQ(resp->supported_features[0].max_version, 33);
    EXPECT_EQ(resp->supported_features[1].name, "transaction.version");
    EXPECT_EQ(resp->supported_features[1].min_version, 0);
    EXPECT_EQ(resp->supported_features[1].max_version, 2);
    ASSERT_EQ(resp->finalized_features.size(), 2u);
    EXPECT_EQ(resp->finalized_features[0].name, "metadata.version");
    EXPECT_EQ(resp->finalized_features[0].max_version_level, 33);
    EXPECT_EQ(resp->finalized_features[1].name, "transaction.version");
    EXPECT_EQ(resp->finalized_features[1].max_version_level, 2);
    EXPECT_EQ(resp->finalized_features_epoch, 1);
}

TEST_F(broker_test, test_api_versions_too_new_gets_v0_error_with_full_list) {
    kafka_client c(broker->port());
    pr::request_header h;
    h.request_api_key = 18;
    h.request_api_version = 99;
    h.correlation_id = 7;
    h.client_id = "future";
    std::vector<uint8_t> frame = {0, 0, 0, 0};
    pr::wire::writer w(frame);
    h.encode(w, 2);
    w.write_u8(0);  // empty tagged fields of the body
    w.patch_i32(0, static_cast<int32_t>(frame.size() - 4));
    c.send_raw(frame);
    auto resp = c.receive<pr::api_versions_response>(0, 0);
    ASSERT_TRUE(resp.has_value());
    EXPECT_EQ(c.last_correlation, 7);
    EXPECT_EQ(resp->error_code, 35);
    EXPECT_GT(resp->api_keys.size(), 10u);
}

TEST_F(broker_test, test_oversized_size_prefix_closes_connection_and_broker_keeps_serving) {
    kafka_client c(broker->port());
    c.send_raw({0x7f, 0xff, 0xff, 0xff});
    EXPECT_TRUE(c.closed_by_peer());
    expect_serving();
}

TEST_F(broker_test, test_negative_size_prefix_closes_connection) {
    kafka_client c(broker->port());
    c.send_raw({0xff, 0xff, 0xff, 0xfe});
    EXPECT_TRUE(c.closed_by_peer());
    expect_serving();
}

TEST_F(broker_test, test_truncated_header_closes_connection) {
    kafka_client c(broker->port());
    // A 3-byte frame cannot hold api key, version and correlation id.
    c.send_raw({0, 0, 0, 3, 0, 3, 0});
    EXPECT_TRUE(c.closed_by_peer());
    expect_serving();
}

TEST_F(broker_test, test_unknown_api_key_closes_connection) {
    kafka_client c(broker->port());
    c.send_raw({0, 0, 0, 10, 0x03, 0xe7, 0, 0, 0, 0, 0, 1, 0xff, 0xff});
    EXPECT_TRUE(c.closed_by_peer());
    expect_serving();
}

TEST_F(broker_test, test_unsupported_version_closes_connection) {
    kafka_client c(broker->port());
    pr::metadata_request req;
    // Metadata v12 is the newest; v13 bytes are not sent by the codec, so write the header.
    c.send_raw({0, 0, 0, 10, 0, 3, 0, 99, 0, 0, 0, 1, 0xff, 0xff});
    EXPECT_TRUE(c.closed_by_peer());
    expect_serving();
}

TEST_F(broker_test, test_truncated_body_closes_connection) {
    kafka_client c(broker->port());
    pr::metadata_request req;
    req.topics = std::vector<pr::metadata_request::metadata_request_topic>{{{}, "t", {}}};
    auto frame = pr::encode_request(1, "it", 4, req);
    frame.resize(frame.size() - 3);
    pr::wire::writer w(frame);
    w.patch_i32(0, static_cast<int32_t>(frame.size() - 4));
    c.send_raw(frame);
    EXPECT_TRUE(c.closed_by_peer());
    expect_serving();
}

TEST_F(broker_test, test_produce_then_fetch_round_trip) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "rt", 1), 0);
    auto batch = make_batch({"hello", "world"});
    auto resp =
        c.call<pr::produce_request, pr::produce_response>(7, produce_req("rt", 0, batch, -1));
    ASSERT_TRUE(resp.has_value());
    EXPECT_EQ(resp->responses[0].partition_responses[0].error_code, 0);
    EXPECT_EQ(resp->responses[0].partition_responses[0].base_offset, 0);
    auto again =
        c.call<pr::produce_request, pr::produce_response>(7, produce_req("rt", 0, batch, 1));
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->responses[0].partition_responses[0].base_offset, 2);
    std::string bytes = fetch_bytes(c, "rt", 0);
    EXPECT_NE(bytes.find("hello"), std::string::npos);
    EXPECT_NE(bytes.find("world"), std::string::npos);
}

TEST_F(broker_test, test_corrupt_batch_crc_gets_corrupt_message_and_log_stays_intact) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "crc", 1), 0);
    auto good = make_batch({"good"});
    ASSERT_TRUE(
        (c.call<pr::produce_request, pr::produce_response>(7, produce_req("crc", 0, good, 1))));
    auto bad = make_batch({"evil"});
    bad.back() ^= 0xff;  // flip a byte of the last record: the CRC no longer matches
    auto resp = c.call<pr::produce_request, pr::produce_response>(7, produce_req("crc", 0, bad, 1));
    ASSERT_TRUE(resp.has_value());
    EXPECT_EQ(resp->responses[0].partition_responses[0].error_code, 2);  // CORRUPT_MESSAGE
    std::string bytes = fetch_bytes(c, "crc", 0);
    EXPECT_NE(bytes.find("good"), std::string::npos);
    EXPECT_EQ(bytes.find("evil"), std::string::npos);
    expect_serving();
}

TEST_F(broker_test, test_produce_to_unknown_partition_is_refused_per_partition) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "one", 1), 0);
    auto resp = c.call<pr::produce_request, pr::produce_response>(
        7, produce_req("one", 5, make_batch({"x"}), 1));
    ASSERT_TRUE(resp.has_value());
    EXPECT_EQ(resp->responses[0].partition_responses[0].error_code, 3);
}

TEST_F(broker_test, test_acks_zero_success_sends_nothing_and_error_closes) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "z", 1), 0);
    c.send(7, produce_req("z", 0, make_batch({"quiet"}), 0));
    // The next response on the connection belongs to the next request.
    auto md = c.call<pr::metadata_request, pr::metadata_response>(4, pr::metadata_request{});
    ASSERT_TRUE(md.has_value());
    EXPECT_EQ(c.last_correlation, 3);
    auto bad = make_batch({"bad"});
    bad.back() ^= 0x01;
    c.send(7, produce_req("z", 0, bad, 0));
    EXPECT_TRUE(c.closed_by_peer());
    kafka_client d(broker->port());
    EXPECT_NE(fetch_bytes(d, "z", 0).find("quiet"), std::string::npos);
}

TEST_F(broker_test, test_metadata_auto_creates_topics_with_num_partitions) {
    kafka_client c(broker->port());
    pr::metadata_request req;
    req.topics = std::vector<pr::metadata_request::metadata_request_topic>{{{}, "auto", {}}};
    req.allow_auto_topic_creation = true;
    auto resp = c.call<pr::metadata_request, pr::metadata_response>(9, req);
    ASSERT_TRUE(resp.has_value());
    ASSERT_EQ(resp->topics.size(), 1u);
    // As Kafka: the response that creates the topic says LEADER_NOT_AVAILABLE, the next one
    // describes it.
    EXPECT_EQ(resp->topics[0].error_code, 5);
    EXPECT_TRUE(resp->topics[0].partitions.empty());
    EXPECT_EQ(resp->brokers.at(0).port, broker->port());
    auto again = c.call<pr::metadata_request, pr::metadata_response>(9, req);
    ASSERT_TRUE(again.has_value());
    ASSERT_EQ(again->topics.size(), 1u);
    EXPECT_EQ(again->topics[0].error_code, 0);
    EXPECT_EQ(again->topics[0].partitions.size(), 1u);
}

TEST_F(broker_test, test_restart_serves_every_acknowledged_message_and_sigterm_exits_zero) {
    {
        kafka_client c(broker->port());
        ASSERT_EQ(create_topic(c, "durable", 1), 0);
        for (int i = 0; i < 20; ++i) {
            auto resp = c.call<pr::produce_request, pr::produce_response>(
                7, produce_req("durable", 0, make_batch({"m" + std::to_string(i) + "!"}), -1));
            ASSERT_TRUE(resp.has_value());
            ASSERT_EQ(resp->responses[0].partition_responses[0].error_code, 0);
        }
    }
    auto info = broker->stop();
    EXPECT_TRUE(info.exited);
    EXPECT_EQ(info.status, 0);
    EXPECT_LT(info.took, std::chrono::seconds(5));
    ASSERT_TRUE(broker->start()) << broker->log_text();
    kafka_client c(broker->port());
    std::string bytes = fetch_bytes(c, "durable", 0);
    for (int i = 0; i < 20; ++i) {
        EXPECT_NE(bytes.find("m" + std::to_string(i) + "!"), std::string::npos) << i;
    }
}

TEST_F(broker_test, test_fetch_long_poll_waits_for_data_then_returns_early) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "poll", 1), 0);
    pr::fetch_request req;
    req.max_wait_ms = 5000;
    req.min_bytes = 1;
    req.max_bytes = 1 << 20;
    req.session_epoch = -1;
    auto& t = req.topics.emplace_back();
    t.topic = "poll";
    auto& p = t.partitions.emplace_back();
    p.fetch_offset = 0;
    p.partition_max_bytes = 1 << 20;
    auto start = std::chrono::steady_clock::now();
    c.send(11, req);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    kafka_client producer(broker->port());
    ASSERT_TRUE((producer.call<pr::produce_request, pr::produce_response>(
        7, produce_req("poll", 0, make_batch({"wake"}), 1))));
    auto resp = c.receive<pr::fetch_response>(11);
    auto took = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(resp.has_value());
    auto b = resp->responses.at(0).partitions.at(0).records.bytes();
    EXPECT_NE(std::string(b.begin(), b.end()).find("wake"), std::string::npos);
    EXPECT_GE(took, std::chrono::milliseconds(250));
    EXPECT_LT(took, std::chrono::milliseconds(4000));
}

TEST_F(broker_test, test_idempotent_retry_is_acknowledged_once_and_gaps_are_refused) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "idem", 1), 0);
    pr::init_producer_id_request init;
    init.transaction_timeout_ms = 60000;
    init.transactional_id = std::nullopt;
    auto pid = c.call<pr::init_producer_id_request, pr::init_producer_id_response>(4, init);
    ASSERT_TRUE(pid.has_value());
    ASSERT_EQ(pid->error_code, 0);
    ASSERT_GE(pid->producer_id, 0);
    auto first = make_batch({"a", "b"}, rec::compression::none, pid->producer_id, 0);
    auto r1 =
        c.call<pr::produce_request, pr::produce_response>(7, produce_req("idem", 0, first, -1));
    ASSERT_TRUE(r1.has_value());
    EXPECT_EQ(r1->responses[0].partition_responses[0].error_code, 0);
    // The same batch again (a retry): the original offsets, nothing written twice.
    auto r2 =
        c.call<pr::produce_request, pr::produce_response>(7, produce_req("idem", 0, first, -1));
    ASSERT_TRUE(r2.has_value());
    EXPECT_EQ(r2->responses[0].partition_responses[0].error_code, 0);
    EXPECT_EQ(r2->responses[0].partition_responses[0].base_offset,
              r1->responses[0].partition_responses[0].base_offset);
    // Sequence 5 after 0..1 leaves a gap.
    auto gap = make_batch({"c"}, rec::compression::none, pid->producer_id, 5);
    auto r3 = c.call<pr::produce_request, pr::produce_response>(7, produce_req("idem", 0, gap, -1));
    ASSERT_TRUE(r3.has_value());
    EXPECT_EQ(r3->responses[0].partition_responses[0].error_code, 45);  // OUT_OF_ORDER_SEQUENCE
    auto next = make_batch({"c"}, rec::compression::none, pid->producer_id, 2);
    auto r4 =
        c.call<pr::produce_request, pr::produce_response>(7, produce_req("idem", 0, next, -1));
    ASSERT_TRUE(r4.has_value());
    EXPECT_EQ(r4->responses[0].partition_responses[0].error_code, 0);
    EXPECT_EQ(r4->responses[0].partition_responses[0].base_offset, 2);
}

TEST_F(broker_test, test_invalid_acks_is_refused_per_partition) {
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "acks", 1), 0);
    auto resp = c.call<pr::produce_request, pr::produce_response>(
        7, produce_req("acks", 0, make_batch({"x"}), 2));
    ASSERT_TRUE(resp.has_value());
    EXPECT_EQ(resp->responses[0].partition_responses[0].error_code, 21);  // INVALID_REQUIRED_ACKS
}

// --- kcat (librdkafka): a real client end to end ---------------------------------------------

class kcat_test : public broker_test, public ::testing::WithParamInterface<std::string> {};

TEST_P(kcat_test, test_kcat_produce_consume_round_trip_with_codec) {
    if (!have_kcat()) {
        GTEST_SKIP() << "kcat not installed (scripts/setup.sh --with-tests installs it)";
    }
    std::string codec = GetParam();
    std::string topic = "kcat-" + codec;
    std::string input = broker->data_dir() / "input.txt";
    {
        FILE* f = std::fopen(input.c_str(), "w");
        for (int i = 0; i < 200; ++i) {
            std::fprintf(f, "key%d:value-%d-%s\n", i % 7, i, codec.c_str());
        }
        std::fclose(f);
    }
    std::string b = broker->bootstrap();
    std::string produce = "timeout 30 kcat -P -b " + b + " -t " + topic +
                          " -K: -X compression.codec=" + codec + " -l " + input +
                          " 2>&1; echo rc=$?";
    std::string pout = run(produce);
    ASSERT_NE(pout.find("rc=0"), std::string::npos) << pout << broker->log_text();
    std::string consume =
        "timeout 30 kcat -C -b " + b + " -t " + topic + " -o beginning -e -q -f '%k:%s@%o\\n' 2>&1";
    std::string cout = run(consume);
    for (int i = 0; i < 200; ++i) {
        std::string line = "key" + std::to_string(i % 7) + ":value-" + std::to_string(i) + "-" +
                           codec + "@" + std::to_string(i) + "\n";
        ASSERT_NE(cout.find(line), std::string::npos) << "missing " << line << cout.substr(0, 2000);
    }
}

INSTANTIATE_TEST_SUITE_P(codecs, kcat_test,
                         ::testing::Values("none", "gzip", "snappy", "lz4", "zstd"));

TEST_F(broker_test, test_kcat_metadata_lists_created_topic) {
    if (!have_kcat()) {
        GTEST_SKIP() << "kcat not installed";
    }
    kafka_client c(broker->port());
    ASSERT_EQ(create_topic(c, "listed", 3), 0);
    std::string out = run("timeout 20 kcat -L -b " + broker->bootstrap() + " -t listed 2>&1");
    EXPECT_NE(out.find("topic \"listed\" with 3 partitions"), std::string::npos) << out;
}

}  // namespace
}  // namespace spool::tests
