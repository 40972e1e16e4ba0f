#include "broker/metadata/etcd/etcd_layout.h"

#include <gtest/gtest.h>

#include <string>

namespace spool::broker::metadata::etcd_layout {
namespace {

using kind = parsed_key::kind;

const keys k{"/spool/c1"};

TEST(etcd_layout_test, test_keys_follow_the_documented_layout) {
    EXPECT_EQ(k.all(), "/spool/c1/");
    EXPECT_EQ(k.cluster_id(), "/spool/c1/cluster_id");
    EXPECT_EQ(k.brokers(), "/spool/c1/brokers/");
    EXPECT_EQ(k.broker(7), "/spool/c1/brokers/7");
    EXPECT_EQ(k.controller(), "/spool/c1/controller");
    EXPECT_EQ(k.topics(), "/spool/c1/topics/");
    EXPECT_EQ(k.topic("orders"), "/spool/c1/topics/orders");
    EXPECT_EQ(k.partitions("orders"), "/spool/c1/partitions/orders/");
    EXPECT_EQ(k.partition("orders", 3), "/spool/c1/partitions/orders/3");
    EXPECT_EQ(k.all_broker_configs(), "/spool/c1/broker_configs/");
    EXPECT_EQ(k.broker_configs(""), "/spool/c1/broker_configs/_default");
    EXPECT_EQ(k.broker_configs("2"), "/spool/c1/broker_configs/2");
    EXPECT_EQ(k.producer_ids(), "/spool/c1/producer_ids");
    EXPECT_EQ(k.user_scram("alice"), "/spool/c1/user_scram/alice");
    EXPECT_EQ(k.user_scram("a/b%c"), "/spool/c1/user_scram/a%2Fb%25c");
}

TEST(etcd_layout_test, test_group_config_keys_escape_and_parse_back_to_the_group_id) {
    EXPECT_EQ(k.group_configs("g1"), "/spool/c1/group_configs/g1");
    EXPECT_EQ(k.group_configs("a/b%c"), "/spool/c1/group_configs/a%2Fb%25c");
    EXPECT_EQ(parse(k, k.group_configs("g1")), (parsed_key{kind::group_config, "g1", -1}));
    EXPECT_EQ(parse(k, k.group_configs("a/b%c")), (parsed_key{kind::group_config, "a/b%c", -1}));
    EXPECT_EQ(parse(k, "/spool/c1/group_configs/").what, kind::unknown);
    EXPECT_EQ(parse(k, "/spool/c1/group_configs/a/b").what, kind::unknown);
    EXPECT_EQ(parse(k, "/spool/c1/group_configs/a%41").what, kind::unknown);
}

TEST(etcd_layout_test, test_user_scram_keys_parse_back_to_the_user_name) {
    EXPECT_EQ(parse(k, k.user_scram("alice")), (parsed_key{kind::user_scram, "alice", -1}));
    EXPECT_EQ(parse(k, k.user_scram("a/b%c")), (parsed_key{kind::user_scram, "a/b%c", -1}));
    EXPECT_EQ(parse(k, "/spool/c1/user_scram/").what, kind::unknown);
    EXPECT_EQ(parse(k, "/spool/c1/user_scram/a/b").what, kind::unknown);
    EXPECT_EQ(parse(k, "/spool/c1/user_scram/a%41").what, kind::unknown);
}

TEST(etcd_layout_test, test_parse_names_every_key_kind) {
    EXPECT_EQ(parse(k, k.cluster_id()), (parsed_key{kind::cluster_id, "", -1}));
    EXPECT_EQ(parse(k, k.broker(12)), (parsed_key{kind::broker, "", 12}));
    EXPECT_EQ(parse(k, k.controller()), (parsed_key{kind::controller, "", -1}));
    EXPECT_EQ(parse(k, k.topic("a.b-c_d")), (parsed_key{kind::topic, "a.b-c_d", -1}));
    EXPECT_EQ(parse(k, k.partition("t", 0)), (parsed_key{kind::partition, "t", 0}));
    EXPECT_EQ(parse(k, k.partition("t", 99999)), (parsed_key{kind::partition, "t", 99999}));
    EXPECT_EQ(parse(k, k.broker_configs("")), (parsed_key{kind::broker_config, "", -1}));
    EXPECT_EQ(parse(k, k.broker_configs("4")), (parsed_key{kind::broker_config, "4", 4}));
    EXPECT_EQ(parse(k, k.producer_ids()), (parsed_key{kind::producer_ids, "", -1}));
}

TEST(etcd_layout_test, test_parse_refuses_foreign_and_malformed_keys) {
    for (std::string bad : {
             std::string("/spool/c2/cluster_id"),  // another cluster's prefix
             std::string("/spool/c1"),             // the prefix itself
             std::string("/spool/c1/"),
             std::string("/spool/c1x/cluster_id"),
             std::string("/spool/c1/cluster_id/x"),
             std::string("/spool/c1/unknown"),
             std::string("/spool/c1/brokers/"),
             std::string("/spool/c1/brokers/-1"),
             std::string("/spool/c1/brokers/007"),
             std::string("/spool/c1/brokers/1x"),
             std::string("/spool/c1/brokers/99999999999999999999999"),
             std::string("/spool/c1/brokers/2147483648"),
             std::string("/spool/c1/topics/"),
             std::string("/spool/c1/topics/a/b"),
             std::string("/spool/c1/topics/.."),
             std::string("/spool/c1/topics/") + std::string(250, 'x'),
             std::string("/spool/c1/partitions/t"),
             std::string("/spool/c1/partitions/t/"),
             std::string("/spool/c1/partitions/t/-1"),
             std::string("/spool/c1/partitions/t/1/2"),
             std::string("/spool/c1/partitions/t/1000000"),
             std::string("/spool/c1/partitions//1"),
             std::string("/spool/c1/broker_configs/"),
             std::string("/spool/c1/broker_configs/default"),
             std::string("/spool/c1/broker_configs/+3"),
             std::string("/spool/c1/producer_ids/1"),
             std::string("/spool/c1/brokers/1\0", 20),
         }) {
        EXPECT_EQ(parse(k, bad).what, kind::unknown) << bad;
    }
}

TEST(etcd_layout_test, test_topic_record_round_trips) {
    topic_record r{protocol::uuid::random(), 12, {{"retention.ms", "1000"}, {"a", "\"q\""}}};
    auto text = encode(r);
    auto back = decode_topic(text);
    ASSERT_TRUE(back) << text;
    EXPECT_EQ(back.value(), r);
    EXPECT_NE(text.find("\"partitions\":12"), std::string::npos) << text;
}

TEST(etcd_layout_test, test_topic_record_keeps_its_replication_factor) {
    topic_record r{protocol::uuid::random(), 3, {}, 3};
    auto text = encode(r);
    EXPECT_NE(text.find("\"replication_factor\":3"), std::string::npos) << text;
    auto back = decode_topic(text);
    ASSERT_TRUE(back) << text;
    EXPECT_EQ(back.value().replication_factor, 3);
}

TEST(etcd_layout_test, test_topic_record_from_before_replication_reads_without_a_factor) {
    // What brokers before #16 wrote: no replication_factor member. It reads (as 0: etcd_state
    // takes the placed replicas' count), and writing it back leaves the member out.
    auto id = protocol::uuid::random().to_string();
    auto old = R"({"id":")" + id + R"(","partitions":2,"configs":{}})";
    auto back = decode_topic(old);
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value().replication_factor, 0);
    EXPECT_EQ(encode(back.value()).find("replication_factor"), std::string::npos);
}

TEST(etcd_layout_test, test_topic_record_with_a_bad_replication_factor_is_an_error) {
    auto id = protocol::uuid::random().to_string();
    for (std::string rf : {"0", "-1", "32768", "1.5", "\"3\"", "null", "true"}) {
        auto bad = R"({"id":")" + id + R"(","partitions":1,"replication_factor":)" + rf + "}";
        auto r = decode_topic(bad);
        EXPECT_FALSE(r) << bad;
    }
}

TEST(etcd_layout_test, test_topic_record_without_configs_has_none) {
    auto id = protocol::uuid::random().to_string();
    auto back = decode_topic(R"({"id":")" + id + R"(","partitions":1})");
    ASSERT_TRUE(back);
    EXPECT_TRUE(back.value().configs.empty());
}

TEST(etcd_layout_test, test_hostile_topic_records_are_errors) {
    auto id = protocol::uuid::random().to_string();
    auto with = [&id](const std::string& partitions, const std::string& configs = "{}") {
        return R"({"id":")" + id + R"(","partitions":)" + partitions + R"(,"configs":)" + configs +
               "}";
    };
    for (std::string bad : {
             std::string(""),
             std::string("{"),
             std::string("null"),
             std::string("[]"),
             std::string("\"text\""),
             std::string(R"({"partitions":1})"),
             std::string(R"({"id":"nope","partitions":1})"),
             std::string(R"({"id":"AAAAAAAAAAAAAAAAAAAAAA","partitions":1})"),  // zero id
             std::string(R"({"id":7,"partitions":1})"),
             with("0"),
             with("-1"),
             with("1.5"),
             with("\"3\""),
             with("true"),
             with("1000001"),  // claims more than max_partitions_per_topic
             with("2147483648"),
             with("99999999999999999999999999"),
             with("18446744073709551615"),
             with("1e300"),
             with("1", "[]"),
             with("1", R"({"k":1})"),
             with("1", R"({"k":null})"),
             with("1", "\"x\""),
             std::string("{\"id\":\"") + id + "\",\"partitions\":1}garbage",
         }) {
        auto r = decode_topic(bad);
        EXPECT_FALSE(r) << bad;
        if (!r) {
            EXPECT_EQ(r.error(), std::make_error_code(std::errc::bad_message));
        }
    }
}

TEST(etcd_layout_test, test_partition_record_round_trips) {
    partition_record r{2, 5, 9, {2, 0, 1}, {2, 1}};
    auto back = decode_partition(encode(r));
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), r);
    EXPECT_EQ(
        encode(r),
        R"({"isr":[2,1],"leader":2,"leader_epoch":5,"partition_epoch":9,"replicas":[2,0,1]})");
    partition_record leaderless{-1, 6, 10, {3}, {3}};
    EXPECT_EQ(decode_partition(encode(leaderless)).value(), leaderless);
}

TEST(etcd_layout_test, test_partition_record_maps_to_state_and_back) {
    partition_record r{1, 2, 3, {1, 2}, {1}};
    auto p = to_state(4, r, 77);
    EXPECT_EQ(p.partition, 4);
    EXPECT_EQ(p.leader, 1);
    EXPECT_EQ(p.leader_epoch, 2);
    EXPECT_EQ(p.partition_epoch, 3);
    EXPECT_EQ(p.replicas, (std::vector<int32_t>{1, 2}));
    EXPECT_EQ(p.isr, std::vector<int32_t>{1});
    EXPECT_EQ(p.record_revision, 77);
    EXPECT_TRUE(p.placed());
    EXPECT_EQ(to_record(p), r);
}

TEST(etcd_layout_test, test_reassignment_fields_round_trip_and_are_checked) {
    partition_record r{1, 2, 3, {1, 2, 0}, {0, 1}};
    r.target_replicas = {1, 2};
    r.adding_replicas = {2};
    r.removing_replicas = {0};
    EXPECT_EQ(encode(r), R"({"adding_replicas":[2],"isr":[0,1],"leader":1,"leader_epoch":2,)"
                         R"("partition_epoch":3,"removing_replicas":[0],"replicas":[1,2,0],)"
                         R"("target_replicas":[1,2]})");
    auto back = decode_partition(encode(r));
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value(), r);
    auto p = to_state(0, r, 9);
    EXPECT_EQ(p.target_replicas, r.target_replicas);
    EXPECT_EQ(p.adding_replicas, r.adding_replicas);
    EXPECT_EQ(p.removing_replicas, r.removing_replicas);
    EXPECT_TRUE(p.reassigning());
    EXPECT_EQ(to_record(p), r);
    const std::string head = R"({"leader":0,"leader_epoch":0,"partition_epoch":0,"replicas":[0],)"
                             R"("isr":[0],)";
    for (std::string bad : {head + R"("target_replicas":[0,0]})", head + R"("adding_replicas":1})",
                            head + R"("removing_replicas":[-1]})"}) {
        EXPECT_FALSE(decode_partition(bad)) << bad;
    }
}

TEST(etcd_layout_test, test_decommission_record_round_trips_and_hostile_ones_are_errors) {
    decommission_record r{{{"orders", 0}, {"orders", 3}}};
    EXPECT_EQ(encode(r), R"({"partitions":[["orders",0],["orders",3]]})");
    EXPECT_EQ(decode_decommission(encode(r)).value(), r);
    for (std::string bad : {std::string("{}"), std::string(R"({"partitions":[["orders"]]})"),
                            std::string(R"({"partitions":[["orders",-1]]})"),
                            std::string(R"({"partitions":[["bad name",0]]})"),
                            std::string(R"({"partitions":[[1,0]]})")}) {
        EXPECT_FALSE(decode_decommission(bad)) << bad;
    }
    keys k{"/spool"};
    EXPECT_EQ(k.decommission(3), "/spool/decommission/3");
    EXPECT_EQ(parse(k, "/spool/decommission/3"),
              (parsed_key{parsed_key::kind::decommission, "", 3}));
    EXPECT_EQ(parse(k, "/spool/decommission/03").what, parsed_key::kind::unknown);
}

TEST(etcd_layout_test, test_hostile_partition_records_are_errors) {
    const std::string tail = R"(,"leader_epoch":0,"partition_epoch":0,"replicas":[0],"isr":[0]})";
    for (
        std::string bad : {
            std::string("{}"),
            std::string("[1]"),
            std::string("{\"leader\":-2") + tail,
            std::string("{\"leader\":2147483648") + tail,
            std::string("{\"leader\":\"0\"") + tail,
            std::string("{\"leader\":0.0") + tail,
            std::string(
                R"({"leader":0,"leader_epoch":-1,"partition_epoch":0,"replicas":[0],"isr":[0]})"),
            std::string(
                R"({"leader":0,"leader_epoch":0,"partition_epoch":1e99,"replicas":[0],"isr":[0]})"),
            std::string(
                R"({"leader":0,"leader_epoch":0,"partition_epoch":0,"replicas":0,"isr":[0]})"),
            std::string(
                R"({"leader":0,"leader_epoch":0,"partition_epoch":0,"replicas":[-1],"isr":[0]})"),
            std::string(
                R"({"leader":0,"leader_epoch":0,"partition_epoch":0,"replicas":[0,0],"isr":[0]})"),
            std::string(
                R"({"leader":0,"leader_epoch":0,"partition_epoch":0,"replicas":["0"],"isr":[0]})"),
            std::string(R"({"leader":0,"leader_epoch":0,"partition_epoch":0,"replicas":[0]})"),
            std::string(
                R"({"leader":0,"leader_epoch":0,"partition_epoch":0,"replicas":[0],"isr":[18446744073709551616]})"),
        }) {
        EXPECT_FALSE(decode_partition(bad)) << bad;
    }
}

TEST(etcd_layout_test, test_broker_registration_round_trips_with_and_without_rack) {
    broker_registration r{3,
                          "inc-1",
                          "dir-1",
                          std::string("r1"),
                          {{"PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT"},
                           {"INTERNAL", "10.0.0.1", 9093, "SASL_PLAINTEXT"}}};
    auto text = encode(r);
    EXPECT_NE(text.find(R"("rack":"r1")"), std::string::npos) << text;
    EXPECT_EQ(decode_broker(text).value(), r);
    r.rack.reset();
    text = encode(r);
    EXPECT_EQ(text.find("rack"), std::string::npos) << text;
    EXPECT_EQ(decode_broker(text).value(), r);
}

TEST(etcd_layout_test, test_incarnation_fields_round_trip_and_default_to_a_clean_unfenced_broker) {
    broker_registration r{
        3, "inc-1", "dir-1", std::nullopt, {{"PLAINTEXT", "127.0.0.1", 9092, "PLAINTEXT"}}};
    auto plain = encode(r);
    EXPECT_EQ(plain.find("fenced"), std::string::npos) << "an unfenced record reads as before";
    EXPECT_EQ(decode_broker(plain).value(), r);
    r.fenced = true;
    r.recovered = false;
    r.unclean_shutdown = true;
    r.directory_changed = true;
    auto text = encode(r);
    EXPECT_NE(text.find(R"("fenced":true)"), std::string::npos) << text;
    EXPECT_NE(text.find(R"("recovered":false)"), std::string::npos) << text;
    EXPECT_EQ(decode_broker(text).value(), r);
    // The revision and lease come from etcd, never from the value.
    r.record_revision = 7;
    r.lease = 9;
    auto back = decode_broker(encode(r)).value();
    EXPECT_EQ(back.record_revision, 0);
    EXPECT_EQ(back.lease, 0);
    const std::string head =
        R"({"node_id":0,"incarnation_id":"i","log_dir_id":"d","endpoints":[],)";
    for (std::string bad :
         {head + R"("fenced":1})", head + R"("recovered":"yes"})",
          head + R"("unclean_shutdown":null})", head + R"("directory_changed":[]})"}) {
        EXPECT_FALSE(decode_broker(bad)) << bad;
    }
}

TEST(etcd_layout_test, test_eligible_leader_replicas_round_trip_only_while_set) {
    partition_record r;
    r.leader = -1;
    r.replicas = {0, 1, 2};
    r.isr = {0};
    auto plain = encode(r);
    EXPECT_EQ(plain.find("elr"), std::string::npos) << plain;
    EXPECT_EQ(plain.find("last_known_leader"), std::string::npos) << plain;
    r.elr = {2, 1};
    r.last_known_leader = 0;
    auto text = encode(r);
    EXPECT_EQ(decode_partition(text).value(), r);
    EXPECT_EQ(to_record(to_state(0, r, 5)), r);
    EXPECT_FALSE(decode_partition(
        R"({"leader":0,"leader_epoch":0,"partition_epoch":0,"replicas":[0],"isr":[0],"elr":[-1]})"));
    EXPECT_FALSE(decode_partition(
        R"({"leader":0,"leader_epoch":0,"partition_epoch":0,"replicas":[0],"isr":[0],"last_known_leader":-2})"));
}

TEST(etcd_layout_test, test_broker_endpoint_without_protocol_is_plaintext) {
    auto r = decode_broker(
        R"({"node_id":0,"incarnation_id":"i","log_dir_id":"d","endpoints":[{"listener":"L","host":"h","port":1}]})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r.value().endpoints.at(0).security_protocol, "PLAINTEXT");
}

TEST(etcd_layout_test, test_hostile_broker_registrations_are_errors) {
    const std::string head = R"({"node_id":0,"incarnation_id":"i","log_dir_id":"d",)";
    for (std::string bad : {
             std::string("not json"),
             std::string(R"({"node_id":0})"),
             std::string(R"({"node_id":-1,"incarnation_id":"i","log_dir_id":"d","endpoints":[]})"),
             std::string(R"({"node_id":"0","incarnation_id":"i","log_dir_id":"d","endpoints":[]})"),
             std::string(R"({"node_id":0,"incarnation_id":1,"log_dir_id":"d","endpoints":[]})"),
             std::string(R"({"node_id":0,"incarnation_id":"i","endpoints":[]})"),
             head + R"("endpoints":{}})",
             head + R"("rack":5,"endpoints":[]})",
             head + R"("endpoints":[1]})",
             head + R"("endpoints":[{"listener":"L","host":"h","port":65536}]})",
             head + R"("endpoints":[{"listener":"L","host":"h","port":-1}]})",
             head + R"("endpoints":[{"listener":"L","port":1}]})",
             head + R"("endpoints":[{"listener":"L","host":"h","port":1,"security_protocol":2}]})",
         }) {
        EXPECT_FALSE(decode_broker(bad)) << bad;
    }
}

TEST(etcd_layout_test, test_controller_record_round_trips_and_refuses_hostile_values) {
    controller_record r{4, "inc-9"};
    EXPECT_EQ(decode_controller(encode(r)).value(), r);
    for (std::string bad :
         {std::string("{}"), std::string(R"({"node_id":4})"),
          std::string(R"({"node_id":-1,"incarnation_id":"x"})"),
          std::string(R"({"node_id":1e10,"incarnation_id":"x"})"), std::string("[")}) {
        EXPECT_FALSE(decode_controller(bad)) << bad;
    }
}

TEST(etcd_layout_test, test_broker_configs_round_trip_and_refuse_hostile_values) {
    std::map<std::string, std::string> c{{"log.retention.ms", "5"}, {"x", ""}};
    EXPECT_EQ(decode_broker_configs(encode_broker_configs(c)).value(), c);
    EXPECT_EQ(encode_broker_configs({}), "{}");
    EXPECT_TRUE(decode_broker_configs("{}").value().empty());
    for (std::string bad : {std::string(""), std::string("[]"), std::string(R"({"k":1})"),
                            std::string(R"({"k":{}})"), std::string("{\"k\":\"v\"")}) {
        EXPECT_FALSE(decode_broker_configs(bad)) << bad;
    }
}

TEST(etcd_layout_test, test_producer_id_is_strict_decimal) {
    EXPECT_EQ(encode_producer_id(0), "0");
    EXPECT_EQ(decode_producer_id("0").value(), 0);
    EXPECT_EQ(decode_producer_id(encode_producer_id(9223372036854775807)).value(),
              9223372036854775807);
    for (std::string bad :
         {std::string(""), std::string("-1"), std::string("+1"), std::string("01"),
          std::string("1 "), std::string(" 1"), std::string("1.0"), std::string("0x10"),
          std::string("9223372036854775808"), std::string("99999999999999999999999999")}) {
        EXPECT_FALSE(decode_producer_id(bad)) << bad;
    }
}

TEST(etcd_layout_test, test_cluster_id_must_be_a_kafka_uuid) {
    auto id = protocol::uuid::random().to_string();
    EXPECT_EQ(decode_cluster_id(id).value(), id);
    EXPECT_FALSE(decode_cluster_id(""));
    EXPECT_FALSE(decode_cluster_id("short"));
    EXPECT_FALSE(decode_cluster_id(id + "x"));
}

// Kafka's protocol carries any bytes in a string; nlohmann's default dump() throws on bytes that
// are not UTF-8, which would take the etcd store's thread down on a hostile AlterConfigs.
TEST(etcd_layout_test, test_values_that_are_not_utf8_are_written_not_thrown) {
    topic_record r;
    r.id = protocol::uuid::random();
    r.partitions = 1;
    r.configs = {{"retention.ms", std::string("1\xff", 2)}};
    std::string text;
    ASSERT_NO_THROW(text = encode(r));
    auto back = decode_topic(text);
    ASSERT_TRUE(back);
    EXPECT_EQ(back.value().configs.at("retention.ms"), "1\xef\xbf\xbd");  // U+FFFD
    ASSERT_NO_THROW(text = encode_broker_configs({{"k", std::string("\xc3", 1)}}));
    EXPECT_TRUE(decode_broker_configs(text));
}

}  // namespace
}  // namespace spool::broker::metadata::etcd_layout
