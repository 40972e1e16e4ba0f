#include "broker/metadata/etcd/etcd_store.h"

#include <gtest/gtest.h>

namespace spool::broker::metadata {
namespace {

using std::chrono::milliseconds;

std::unique_ptr<config::broker_config> config_of(const std::string& yaml) {
    std::string error;
    auto c = config::broker_config::from_yaml_text(yaml, {}, &error);
    EXPECT_TRUE(c) << error;
    return c;
}

TEST(etcd_store_options_test, test_options_come_from_the_property_table_keys) {
    auto c = config_of(
        "metadata.store: etcd\n"
        "etcd.endpoints: http://127.0.0.1:1,http://127.0.0.1:2\n"
        "etcd.prefix: /spool/prod/\n"
        "etcd.request.timeout.ms: 700\n"
        "etcd.connect.timeout.ms: 300\n"
        "metadata.change.timeout.ms: 4000\n");
    ASSERT_TRUE(c);
    auto o = etcd_store_options::from_config(*c);
    EXPECT_EQ(o.client.endpoints,
              (std::vector<std::string>{"http://127.0.0.1:1", "http://127.0.0.1:2"}));
    EXPECT_EQ(o.prefix, "/spool/prod/");  // the store drops the trailing '/'
    EXPECT_EQ(o.client.request_timeout, milliseconds(700));
    EXPECT_EQ(o.client.connect_timeout, milliseconds(300));
    EXPECT_EQ(o.change_timeout, milliseconds(4000));
}

TEST(etcd_store_options_test, test_session_options_come_from_the_broker_keys) {
    auto c = config_of(
        "node.id: 7\n"
        "broker.rack: r2\n"
        "log.dirs: /data/a,/data/b\n"
        "broker.session.timeout.ms: 6000\n"
        "broker.heartbeat.interval.ms: 1500\n");
    ASSERT_TRUE(c);
    auto o = session_options_from_config(*c, {{"PLAINTEXT", "h", 9092, "PLAINTEXT"}});
    EXPECT_EQ(o.self.node_id, 7);
    EXPECT_EQ(o.self.rack, std::optional<std::string>("r2"));
    EXPECT_EQ(o.self.endpoints.at(0).host, "h");
    EXPECT_EQ(o.log_dir, "/data/a");
    EXPECT_EQ(o.session_timeout, milliseconds(6000));
    EXPECT_EQ(o.heartbeat_interval, milliseconds(1500));

    auto defaults = session_options_from_config(*config_of(""), {});
    EXPECT_FALSE(defaults.self.rack.has_value());
    EXPECT_EQ(defaults.session_timeout, milliseconds(9000));
    EXPECT_EQ(defaults.heartbeat_interval, milliseconds(2000));
}

}  // namespace
}  // namespace spool::broker::metadata
