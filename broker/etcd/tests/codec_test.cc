// The gateway's JSON, both ways, with bodies as etcd 3.4 writes them (taken from curl against
// /usr/bin/etcd): absent fields are 0/false, int64 are strings, bytes are base64.
#include "broker/etcd/codec.h"

#include "broker/etcd/http_connection.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace spool::broker::etcd::codec {
namespace {

using nlohmann::json;

TEST(etcd_codec, test_base64_round_trips_every_length_and_byte) {
    std::string bytes;
    for (int i = 0; i < 300; ++i) {
        bytes.push_back(static_cast<char>(i * 37 % 256));
        auto decoded = base64_decode(base64_encode(bytes));
        ASSERT_TRUE(decoded) << i;
        EXPECT_EQ(decoded.value(), bytes);
    }
    EXPECT_EQ(base64_encode("foo"), "Zm9v");
    EXPECT_EQ(base64_encode("fo"), "Zm8=");
    EXPECT_EQ(base64_encode("f"), "Zg==");
}

TEST(etcd_codec, test_base64_rejects_bad_text) {
    for (const char* bad : {"Zm9", "Zm9v!", "Z===", "Zm=v", "Zg==Zg==", "====", "Zm9v\n"}) {
        EXPECT_EQ(base64_decode(bad).error(), errc::bad_response) << bad;
    }
}

TEST(etcd_codec, test_range_decodes_etcd_bodies_with_absent_fields) {
    auto r = decode_range(
        R"({"header":{"cluster_id":"1","member_id":"2","revision":"7","raft_term":"2"},)"
        R"("kvs":[{"key":"Zm9v","create_revision":"2","mod_revision":"7","version":"3",)"
        R"("value":"YmFy","lease":"99"},{"key":"Zm9w","create_revision":"3","mod_revision":"3",)"
        R"("version":"1"}],"more":true,"count":"5"})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value().revision, 7);
    EXPECT_TRUE(r.value().more);
    EXPECT_EQ(r.value().count, 5);
    ASSERT_EQ(r.value().kvs.size(), 2u);
    EXPECT_EQ(r.value().kvs[0].key, "foo");
    EXPECT_EQ(r.value().kvs[0].value, "bar");
    EXPECT_EQ(r.value().kvs[0].lease, 99);
    EXPECT_EQ(r.value().kvs[0].version, 3);
    EXPECT_EQ(r.value().kvs[1].value, "");  // an empty value is left out by the gateway
    EXPECT_EQ(r.value().kvs[1].lease, 0);

    auto empty = decode_range(R"({"header":{"revision":"2"}})");
    ASSERT_TRUE(empty);
    EXPECT_TRUE(empty.value().kvs.empty());
    EXPECT_EQ(empty.value().count, 0);
    EXPECT_FALSE(empty.value().more);
}

TEST(etcd_codec, test_decoders_refuse_wrong_types_and_garbage) {
    for (const char* bad :
         {"", "not json", "[]", R"({"header":[]})", R"({"header":{"revision":"x7"}})",
          R"({"header":{"revision":"7"},"kvs":{}})", R"({"header":{"revision":"7"},"kvs":[1]})",
          R"({"header":{"revision":"7"},"kvs":[{"key":"%%%%"}]})",
          R"({"header":{"revision":"7"},"more":"yes"})",
          R"({"header":{"revision":"99999999999999999999"}})"}) {
        EXPECT_EQ(decode_range(bad).error(), errc::bad_response) << bad;
    }
    EXPECT_EQ(decode_txn(R"({"header":{},"responses":[{"response_range":[]}]})").error(),
              errc::bad_response);
    EXPECT_EQ(decode_lease_grant(R"({"header":{},"TTL":"5"})").error(), errc::bad_response);
}

TEST(etcd_codec, test_txn_encodes_each_compare_target_with_its_operand_field) {
    txn_request req;
    req.compares = {compare::absent("a"),
                    compare::modified_at("b", 9),
                    {"c", compare::target::value, compare::op::not_equal, 0, "v", {}},
                    {"d", compare::target::version, compare::op::greater, 2, {}, "e"},
                    {"f", compare::target::lease, compare::op::less, 5, {}, {}}};
    req.success = {put_op{"k", "v", 7}, delete_op{"p", "q"}};
    req.failure = {range_op{"r", {}, 3}};
    json j = json::parse(encode_txn(req));
    EXPECT_EQ(j["compare"][0], json::parse(R"({"key":"YQ==","target":"CREATE","result":"EQUAL",
                                              "create_revision":"0"})"));
    EXPECT_EQ(j["compare"][1]["target"], "MOD");
    EXPECT_EQ(j["compare"][1]["mod_revision"], "9");
    EXPECT_EQ(j["compare"][2]["value"], "dg==");
    EXPECT_EQ(j["compare"][2]["result"], "NOT_EQUAL");
    EXPECT_EQ(j["compare"][3]["version"], "2");
    EXPECT_EQ(j["compare"][3]["range_end"], "ZQ==");
    EXPECT_EQ(j["compare"][3]["result"], "GREATER");
    EXPECT_EQ(j["compare"][4]["lease"], "5");
    EXPECT_EQ(j["compare"][4]["result"], "LESS");
    EXPECT_EQ(j["success"][0], json::parse(R"({"request_put":{"key":"aw==","value":"dg==",
                                              "lease":"7"}})"));
    EXPECT_EQ(j["success"][1]["request_delete_range"]["range_end"], "cQ==");
    EXPECT_EQ(j["failure"][0]["request_range"]["limit"], "3");
}

TEST(etcd_codec, test_txn_result_keeps_the_ranges_of_the_taken_branch) {
    auto r = decode_txn(
        R"({"header":{"revision":"2"},"responses":[{"response_put":{"header":{"revision":"2"}}},)"
        R"({"response_range":{"header":{"revision":"2"},"kvs":[{"key":"Zm9v","value":"YmFy"}],)"
        R"("count":"1"}}]})");
    ASSERT_TRUE(r);
    EXPECT_FALSE(r.value().succeeded);  // absent = false
    ASSERT_EQ(r.value().ranges.size(), 1u);
    EXPECT_EQ(r.value().ranges[0].kvs.at(0).value, "bar");
}

TEST(etcd_codec, test_keep_alive_without_ttl_is_lease_not_found) {
    EXPECT_EQ(decode_keep_alive(R"({"result":{"header":{"revision":"3"},"ID":"123"}})").error(),
              errc::lease_not_found);
    auto ok = decode_keep_alive("{\"result\":{\"header\":{},\"ID\":\"1\",\"TTL\":\"5\"}}\n");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok.value(), 5);
    EXPECT_EQ(decode_keep_alive(R"({"error":{"grpc_code":14,"message":"closing"}})").error(),
              errc::unavailable);
}

TEST(etcd_codec, test_error_bodies_map_to_client_errors) {
    EXPECT_EQ(decode_error(404, R"({"error":"etcdserver: requested lease not found",)"
                                R"("message":"etcdserver: requested lease not found","code":5})"),
              errc::lease_not_found);
    EXPECT_EQ(decode_error(400, R"({"message":"etcdserver: mvcc: required revision has been )"
                                R"(compacted","code":11})"),
              errc::compacted);
    EXPECT_EQ(decode_error(400, R"({"message":"etcdserver: mvcc: required revision is a future )"
                                R"(revision","code":11})"),
              errc::request_failed);
    EXPECT_EQ(decode_error(503, R"({"message":"etcdserver: no leader","code":14})"),
              errc::unavailable);
    EXPECT_EQ(decode_error(400, R"({"message":"etcdserver: too many operations in txn request",)"
                                R"("code":3})"),
              errc::request_failed);
    EXPECT_EQ(decode_error(502, "<html>bad gateway</html>"), errc::unavailable);
    EXPECT_EQ(decode_error(400, "<html></html>"), errc::bad_response);
}

TEST(etcd_codec, test_watch_messages_as_etcd_streams_them) {
    auto created = decode_watch_message(R"({"result":{"header":{"revision":"4"},"created":true}})");
    ASSERT_TRUE(created);
    EXPECT_EQ(created.value().what, watch_message::kind::created);

    auto events = decode_watch_message(
        R"({"result":{"header":{"revision":"6"},"events":[{"kv":{"key":"Zm9v","create_revision":)"
        R"("4","mod_revision":"5","version":"2","value":"YmFy"}},{"type":"DELETE","kv":{"key":)"
        R"("Zm9v","mod_revision":"6"}}]}})");
    ASSERT_TRUE(events);
    ASSERT_EQ(events.value().what, watch_message::kind::batch);
    const auto& batch = events.value().batch;
    EXPECT_EQ(batch.revision, 6);
    EXPECT_FALSE(batch.progress_notify);
    ASSERT_EQ(batch.events.size(), 2u);
    EXPECT_EQ(batch.events[0].type, watch_event::kind::put);
    EXPECT_EQ(batch.events[0].kv.value, "bar");
    EXPECT_EQ(batch.events[1].type, watch_event::kind::del);
    EXPECT_EQ(batch.events[1].kv.mod_revision, 6);

    auto progress = decode_watch_message(R"({"result":{"header":{"revision":"9"}}})");
    ASSERT_TRUE(progress);
    EXPECT_TRUE(progress.value().batch.progress_notify);
    EXPECT_EQ(progress.value().batch.revision, 9);

    auto compacted = decode_watch_message(
        R"({"result":{"header":{"raft_term":"2"},"canceled":true,"compact_revision":"2"}})");
    ASSERT_TRUE(compacted);
    EXPECT_EQ(compacted.value().what, watch_message::kind::canceled);
    EXPECT_EQ(compacted.value().error, errc::compacted);
    EXPECT_EQ(compacted.value().compact_revision, 2);

    auto error = decode_watch_message(R"({"error":{"grpc_code":14,"http_code":503,)"
                                      R"("message":"transport is closing"}})");
    ASSERT_TRUE(error);
    EXPECT_EQ(error.value().what, watch_message::kind::error);
    EXPECT_EQ(error.value().error, errc::unavailable);

    EXPECT_EQ(decode_watch_message(R"({"result":{"events":[{"type":"BOGUS","kv":{}}]}})").error(),
              errc::bad_response);
    EXPECT_EQ(decode_watch_message(R"({"result":{}})").error(), errc::bad_response);
}

TEST(etcd_codec, test_endpoints_parse_or_are_refused) {
    auto ok = parse_endpoint("http://127.0.0.1:2379/");
    ASSERT_TRUE(ok);
    EXPECT_EQ(ok.value().host, "127.0.0.1");
    EXPECT_EQ(ok.value().port, "2379");
    auto v6 = parse_endpoint("[::1]:2379");
    ASSERT_TRUE(v6);
    EXPECT_EQ(v6.value().host, "::1");
    auto tls = parse_endpoint("https://etcd-0.etcd:2379");
    ASSERT_TRUE(tls);
    EXPECT_TRUE(tls.value().tls);
    EXPECT_EQ(tls.value().host, "etcd-0.etcd");
    EXPECT_FALSE(ok.value().tls);
    for (const char* bad : {"unix://etcd:2379", "etcd", "etcd:", ":2379", "etcd:0", "etcd:65536",
                            "etcd:99999999999999999999", "etcd:23a9"}) {
        EXPECT_FALSE(parse_endpoint(bad)) << bad;
    }
}

TEST(etcd_codec, test_prefix_end_increments_the_last_byte_that_can_be) {
    EXPECT_EQ(prefix_end("/spool/a/"), "/spool/a0");
    EXPECT_EQ(prefix_end(std::string("a\xff", 2)), "b");
    EXPECT_EQ(prefix_end(std::string("\xff\xff", 2)), std::string(1, '\0'));
    EXPECT_EQ(prefix_end(""), std::string(1, '\0'));
}

}  // namespace
}  // namespace spool::broker::etcd::codec

namespace spool::broker::etcd::codec {
namespace {

// The gateway's cost over gRPC is this JSON + base64 work: measured here for README.md.
TEST(etcd_codec, test_a_thousand_key_range_decodes_whole_and_fast) {
    json kvs = json::array();
    for (int i = 0; i < 1000; ++i) {
        std::string value(200, char('a' + i % 26));  // a topic / partition record's size
        kvs.push_back({{"key", base64_encode("/spool/default/partitions/t/" + std::to_string(i))},
                       {"value", base64_encode(value)},
                       {"create_revision", std::to_string(i + 1)},
                       {"mod_revision", std::to_string(i + 2)},
                       {"version", "1"}});
    }
    std::string body =
        json{{"header", {{"revision", "2000"}}}, {"kvs", kvs}, {"count", "1000"}}.dump();
    auto start = std::chrono::steady_clock::now();
    constexpr int rounds = 20;
    for (int r = 0; r < rounds; ++r) {
        auto decoded = decode_range(body);
        ASSERT_TRUE(decoded);
        ASSERT_EQ(decoded.value().kvs.size(), 1000u);
        EXPECT_EQ(decoded.value().kvs[999].mod_revision, 1001);
        EXPECT_EQ(decoded.value().kvs[7].value, std::string(200, 'h'));
    }
    double per_kv_us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count() /
        (rounds * 1000.0);
    std::printf("decode_range: %.2f us per key-value (%zu byte body of 1000 kvs)\n", per_kv_us,
                body.size());
    EXPECT_LT(per_kv_us, 1000.0);
}

}  // namespace
}  // namespace spool::broker::etcd::codec
