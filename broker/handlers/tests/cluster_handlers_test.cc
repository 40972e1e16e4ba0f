// The Kafka handlers in a cluster, through the real dispatcher (header parse, version check,
// decode, handler, encode) on a real shard pool with real partition logs, over a fake metadata
// store whose snapshots each test sets (broker/metadata/tests/fake_store.h says why): this
// broker is node 0 of three, partitions are led across all three, brokers go away, this broker
// gets fenced. The group coordinator runs for the FindCoordinator cases. The authorization cases
// turn services' authorizer on and put ACL bindings into the snapshot.

#include "broker/cluster/partition_manager.h"
#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/fetch_sessions.h"
#include "broker/handlers/kafka_dispatcher.h"
#include "broker/handlers/producer_ids.h"
#include "broker/handlers/services.h"
#include "broker/metadata/tests/fake_store.h"
#include "broker/runtime/shard_pool.h"
#include "common/testing/temp_dir.h"
#include "protocol/api/framing.h"
#include "protocol/messages/create_acls.h"
#include "protocol/messages/create_partitions.h"
#include "protocol/messages/create_topics.h"
#include "protocol/messages/delete_acls.h"
#include "protocol/messages/delete_records.h"
#include "protocol/messages/delete_topics.h"
#include "protocol/messages/describe_acls.h"
#include "protocol/messages/describe_cluster.h"
#include "protocol/messages/fetch.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/headers.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/metadata.h"
#include "protocol/messages/offset_for_leader_epoch.h"
#include "protocol/messages/produce.h"
#include "protocol/messages/write_txn_markers.h"
#include "protocol/records/batch_builder.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <filesystem>
#include <thread>

namespace spool::broker::handlers {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
namespace pr = spool::protocol;
using metadata::cluster_state;
using metadata::testing::add;
using metadata::testing::broker;
using metadata::testing::fake_store;
using metadata::testing::topic;
using pr::error_code;

int16_t err(error_code e) {
    return static_cast<int16_t>(e);
}

std::vector<uint8_t> one_record_batch() {
    pr::records::batch_builder b(pr::records::batch_options{});
    b.add(0, pr::records::nullable_bytes::null(), pr::records::nullable_bytes::of("v"));
    return b.build();
}

// Node 0 of a three-broker cluster; broker 1 advertises a second listener first, broker 2 only
// a listener of another name (clients of PLAINTEXT get its first endpoint).
cluster_state three_brokers() {
    cluster_state s;
    s.cluster_id = "cluster-of-three-000000";
    auto b1 = broker(1, "h1.plain", 9192, "rack-b");
    b1.endpoints.insert(b1.endpoints.begin(), {"INTERNAL", "h1.internal", 19192, "PLAINTEXT"});
    auto b2 = broker(2, "h2.internal", 19292, "rack-c");
    b2.endpoints[0].listener = "INTERNAL";
    s.brokers = {{0, broker(0, "h0.plain", 9092, "rack-a")}, {1, b1}, {2, b2}};
    s.controller_id = 1;
    return s;
}

class cluster_handlers_test : public ::testing::Test {
protected:
    void SetUp() override {
        std::string error;
        config = config::broker_config::from_yaml_text(
            "", {"node.id=0", "offsets.topic.num.partitions=3", "spool.cores=2"}, &error);
        ASSERT_TRUE(config) << error;
        pool = std::make_unique<runtime::shard_pool>(2);
        pool->start();
        partitions = std::make_unique<cluster::partition_manager>(*pool, *config, tmp.path());
        ASSERT_TRUE(partitions->open_all(cluster_state{}));
        producer_ids = std::make_unique<producer_id_allocator>(store, *pool);
        sessions = std::make_unique<fetch_session_cache>(100, pool->shard_count());
        svc = std::make_unique<services>(
            services{*config, store, *partitions, *pool, *producer_ids, *sessions, nullptr, 0,
                     advertised_endpoint{"h0.plain", 9092}, tmp.path().string()});
        dispatcher = std::make_unique<kafka_dispatcher>(*svc);
        conn.id = 1;
        conn.shard = 0;
        conn.peer = "127.0.0.1:40000";
        conn.listener = "PLAINTEXT";
    }
    void TearDown() override {
        if (groups) {
            groups->stop_blocking();
        }
        partitions->close_all();
        pool->stop();
    }

    // Sets the snapshot and opens the logs of the partitions this broker is a replica of.
    void set(const cluster_state& s) {
        store.set(s);
        for (const auto& [name, t] : store.snapshot()->topics) {
            auto ec =
                asio::co_spawn(pool->executor(0), partitions->ensure_topic(t), asio::use_future)
                    .get();
            ASSERT_FALSE(ec) << ec.message();
        }
    }

    // Sets the snapshot and hands every hosted partition its new record (as replica_sync does).
    void apply(const cluster_state& s) {
        set(s);
        for (const auto& [name, t] : store.snapshot()->topics) {
            asio::co_spawn(pool->executor(0), partitions->apply_assignments(t), asio::use_future)
                .get();
        }
    }
    // ListOffsets of one partition: its answer.
    pr::list_offsets_response::list_offsets_topic_response::list_offsets_partition_response
    list_offset(const std::string& t, int32_t p, int64_t ts, int16_t version,
                int32_t replica_id = -1) {
        pr::list_offsets_request lo;
        lo.replica_id = replica_id;
        auto& lt = lo.topics.emplace_back();
        lt.name = t;
        lt.partitions.push_back({p, -1, ts, 1});
        auto lr = call<pr::list_offsets_response>(version, lo);
        if (lr.topics.empty() || lr.topics[0].partitions.empty()) {
            ADD_FAILURE() << "no partition in the ListOffsets answer";
            return {};
        }
        return lr.topics[0].partitions[0];
    }

    void start_groups() { start_groups(coordinator::service_config_from(*config)); }
    void start_groups(const coordinator::service_config& sc) {
        groups = std::make_unique<coordinator::coordinator_service>(store, *partitions, sc, clock);
        ASSERT_FALSE(groups->start_blocking());
        svc->groups = groups.get();
    }

    static asio::awaitable<net::handled> dispatch(kafka_dispatcher* d, net::request_context* ctx) {
        co_return co_await d->dispatch(*ctx);
    }

    template <class Response, class Request>
    Response call(int16_t version, const Request& req) {
        auto frame = pr::encode_request(7, "test", version, req);
        frame.erase(frame.begin(), frame.begin() + 4);  // the size prefix: net/ strips it
        net::request_context ctx(conn, std::move(frame), [] {});
        auto h =
            asio::co_spawn(pool->executor(0), dispatch(dispatcher.get(), &ctx), asio::use_future)
                .get();
        if (h.outcome != net::request_outcome::respond) {
            ADD_FAILURE() << "no response to api " << int(Request::api) << " v" << version;
            return Response{};
        }
        EXPECT_TRUE(h.response.splices.empty());  // the cases here read no records
        last_frame = std::move(h.response.buffer);
        pr::wire::reader r(std::span<const uint8_t>(last_frame).subspan(4));
        pr::response_header header;
        EXPECT_TRUE(header.decode(r, pr::response_header_version(Response::api, version)));
        Response resp;
        EXPECT_TRUE(resp.decode(r, version));
        return resp;
    }

    pr::metadata_response metadata_of(const std::string& name, int16_t version = 12) {
        pr::metadata_request req;
        req.topics = std::vector<pr::metadata_request::metadata_request_topic>{{{}, name, {}}};
        return call<pr::metadata_response>(version, req);
    }
    pr::produce_response produce(const std::string& t, int32_t p, int16_t version = 10) {
        pr::produce_request req;
        req.acks = 1;
        req.timeout_ms = 5000;
        auto& td = req.topic_data.emplace_back();
        td.name = t;
        auto& pd = td.partition_data.emplace_back();
        pd.index = p;
        pd.records = pr::records_field::view(batch);
        return call<pr::produce_response>(version, req);
    }
    pr::fetch_response fetch(const std::string& t, int32_t p, int16_t version = 12) {
        pr::fetch_request req;
        req.replica_id = -1;
        req.max_wait_ms = 0;
        req.min_bytes = 1;
        req.max_bytes = 1 << 20;
        req.session_epoch = -1;
        auto& ft = req.topics.emplace_back();
        ft.topic = t;
        auto& fp = ft.partitions.emplace_back();
        fp.partition = p;
        fp.fetch_offset = 0;
        fp.partition_max_bytes = 1 << 20;
        return call<pr::fetch_response>(version, req);
    }
    pr::create_topics_response create(const std::string& name, int32_t partitions, int16_t rf) {
        pr::create_topics_request req;
        req.timeout_ms = 5000;
        auto& t = req.topics.emplace_back();
        t.name = name;
        t.num_partitions = partitions;
        t.replication_factor = rf;
        return call<pr::create_topics_response>(5, req);
    }
    bool dir_of(const std::string& t, int32_t p) const {
        return fs::exists(tmp.path() / (t + "-" + std::to_string(p)));
    }

    spool::testing::temp_dir tmp{"spool-cluster-handlers-tests"};
    fake_store store;
    std::unique_ptr<config::broker_config> config;
    std::unique_ptr<runtime::shard_pool> pool;
    std::unique_ptr<cluster::partition_manager> partitions;
    std::unique_ptr<producer_id_allocator> producer_ids;
    std::unique_ptr<fetch_session_cache> sessions;
    std::unique_ptr<services> svc;
    std::unique_ptr<kafka_dispatcher> dispatcher;
    coordinator::system_clock clock;
    std::unique_ptr<coordinator::coordinator_service> groups;
    net::connection_info conn;
    std::vector<uint8_t> last_frame;
    std::vector<uint8_t> batch = one_record_batch();
};

TEST_F(cluster_handlers_test, test_metadata_lists_every_live_broker_and_the_spread_leaders) {
    auto s = three_brokers();
    add(s, topic("orders", {0, 1, 2}));
    set(s);
    for (int16_t v : {int16_t(1), int16_t(9), int16_t(12)}) {
        auto md = metadata_of("orders", v);
        ASSERT_EQ(md.brokers.size(), 3u) << "v" << v;
        EXPECT_EQ(md.brokers[0].node_id, 0);
        EXPECT_EQ(md.brokers[0].host, "h0.plain");
        EXPECT_EQ(md.brokers[1].host, "h1.plain");  // the endpoint of the request's listener
        EXPECT_EQ(md.brokers[1].port, 9192);
        EXPECT_EQ(md.brokers[2].host, "h2.internal");  // none of it: the first endpoint
        EXPECT_EQ(md.brokers[2].port, 19292);
        EXPECT_EQ(md.brokers[1].rack, std::optional<std::string>("rack-b"));
        EXPECT_EQ(md.controller_id, 1);
        ASSERT_EQ(md.topics.size(), 1u);
        ASSERT_EQ(md.topics[0].partitions.size(), 3u);
        for (int32_t p = 0; p < 3; ++p) {
            const auto& part = md.topics[0].partitions[static_cast<size_t>(p)];
            EXPECT_EQ(part.error_code, 0);
            EXPECT_EQ(part.leader_id, p);
            EXPECT_EQ(part.replica_nodes, std::vector<int32_t>{p});
            EXPECT_EQ(part.isr_nodes, std::vector<int32_t>{p});
            EXPECT_TRUE(part.offline_replicas.empty());
        }
    }
    // Only this broker's replica has a log here.
    EXPECT_TRUE(dir_of("orders", 0));
    EXPECT_FALSE(dir_of("orders", 1));
    EXPECT_FALSE(dir_of("orders", 2));
}

TEST_F(cluster_handlers_test, test_broker_gone_shows_offline_replicas_and_leader_not_available) {
    auto s = three_brokers();
    s.brokers.erase(2);
    auto t = topic("orders", {0, 1, -1});
    t.partitions[2].replicas = {2};
    t.partitions[2].isr = {2};
    t.partitions[2].leader_epoch = 1;
    add(s, t);
    set(s);
    auto md = metadata_of("orders");
    ASSERT_EQ(md.brokers.size(), 2u);
    const auto& gone = md.topics.at(0).partitions.at(2);
    EXPECT_EQ(gone.error_code, err(error_code::leader_not_available));
    EXPECT_EQ(gone.leader_id, -1);
    EXPECT_EQ(gone.leader_epoch, 1);
    EXPECT_EQ(gone.replica_nodes, std::vector<int32_t>{2});
    EXPECT_EQ(gone.offline_replicas, std::vector<int32_t>{2});
    EXPECT_EQ(md.topics[0].partitions[1].error_code, 0);
    // Produce to it: nobody leads it.
    EXPECT_EQ(produce("orders", 2).responses[0].partition_responses[0].error_code,
              err(error_code::not_leader_or_follower));
}

TEST_F(cluster_handlers_test, test_describe_cluster_lists_all_brokers_and_the_controller) {
    set(three_brokers());
    pr::describe_cluster_request req;
    auto dc = call<pr::describe_cluster_response>(0, req);
    EXPECT_EQ(dc.cluster_id, "cluster-of-three-000000");
    EXPECT_EQ(dc.controller_id, 1);
    ASSERT_EQ(dc.brokers.size(), 3u);
    EXPECT_EQ(dc.brokers[1].broker_id, 1);
    EXPECT_EQ(dc.brokers[1].host, "h1.plain");
    EXPECT_EQ(dc.brokers[2].rack, std::optional<std::string>("rack-c"));
}

TEST_F(cluster_handlers_test, test_produce_led_elsewhere_is_not_leader_with_the_new_leader) {
    auto s = three_brokers();
    add(s, topic("orders", {0, 1}));
    s.topics["orders"].partitions[1].leader_epoch = 4;
    set(s);
    auto ok = produce("orders", 0);
    EXPECT_EQ(ok.responses[0].partition_responses[0].error_code, 0);
    EXPECT_EQ(ok.responses[0].partition_responses[0].base_offset, 0);

    auto moved = produce("orders", 1);
    const auto& pr1 = moved.responses[0].partition_responses[0];
    EXPECT_EQ(pr1.error_code, err(error_code::not_leader_or_follower));
    EXPECT_EQ(pr1.current_leader.leader_id, 1);  // KIP-951, v10+
    EXPECT_EQ(pr1.current_leader.leader_epoch, 4);
    ASSERT_EQ(moved.node_endpoints.size(), 1u);
    EXPECT_EQ(moved.node_endpoints[0].node_id, 1);
    EXPECT_EQ(moved.node_endpoints[0].host, "h1.plain");
    EXPECT_EQ(moved.node_endpoints[0].port, 9192);
    // Older versions get the error alone.
    EXPECT_EQ(produce("orders", 1, 9).responses[0].partition_responses[0].error_code,
              err(error_code::not_leader_or_follower));
    // Unknown stays unknown.
    EXPECT_EQ(produce("orders", 7).responses[0].partition_responses[0].error_code,
              err(error_code::unknown_topic_or_partition));
}

// replica_sync opens a new topic's logs a round after the snapshot names this broker leader
// (a second or more under load). A Produce in between opens them itself instead of answering
// NOT_LEADER_OR_FOLLOWER, so the connection's next request can never be taken before it (an
// idempotent producer's later batch before its first: OUT_OF_ORDER_SEQUENCE_NUMBER for ever).
TEST_F(cluster_handlers_test, test_produce_ahead_of_replica_sync_opens_the_log_first) {
    partitions->set_logs_version(store.snapshot()->version);
    auto s = three_brokers();
    add(s, topic("fresh", {0, 1}));
    store.set(s);  // what replica_sync has not applied yet: no log is open
    auto first = produce("fresh", 0);
    EXPECT_EQ(first.responses[0].partition_responses[0].error_code, 0);
    EXPECT_EQ(first.responses[0].partition_responses[0].base_offset, 0);
    EXPECT_EQ(produce("fresh", 0).responses[0].partition_responses[0].base_offset, 1);
    // Led elsewhere is still refused.
    EXPECT_EQ(produce("fresh", 1).responses[0].partition_responses[0].error_code,
              err(error_code::not_leader_or_follower));

    // Once replica_sync has caught up, a missing log is not looked for again.
    auto t2 = topic("later", {0});
    add(s, t2);
    store.set(s);
    partitions->set_logs_version(store.snapshot()->version);
    EXPECT_EQ(produce("later", 0).responses[0].partition_responses[0].error_code,
              err(error_code::not_leader_or_follower));
}

// The same for a leadership change: the snapshot names this broker leader of a partition it
// follows, and replica_sync has not told the partition yet.
TEST_F(cluster_handlers_test, test_produce_ahead_of_replica_sync_takes_the_new_leadership_first) {
    auto s = three_brokers();
    auto t = topic("moving", {1});
    t.partitions[0].replicas = {1, 0};
    t.partitions[0].isr = {1, 0};
    add(s, t);
    apply(s);  // a follower here
    partitions->set_logs_version(store.snapshot()->version);
    EXPECT_EQ(produce("moving", 0).responses[0].partition_responses[0].error_code,
              err(error_code::not_leader_or_follower));

    s.topics["moving"].partitions[0].leader = 0;
    s.topics["moving"].partitions[0].leader_epoch = 1;
    s.topics["moving"].partitions[0].isr = {0};
    store.set(s);  // not applied to the partition
    auto r = produce("moving", 0);
    EXPECT_EQ(r.responses[0].partition_responses[0].error_code, 0);
    EXPECT_EQ(r.responses[0].partition_responses[0].base_offset, 0);
}

TEST_F(cluster_handlers_test, test_reads_of_a_partition_led_elsewhere_are_not_leader) {
    auto s = three_brokers();
    add(s, topic("orders", {0, 2}));
    set(s);
    auto f = fetch("orders", 1, 12);
    const auto& fp = f.responses.at(0).partitions.at(0);
    EXPECT_EQ(fp.error_code, err(error_code::not_leader_or_follower));
    EXPECT_EQ(fp.current_leader.leader_id, 2);  // KIP-951 (node_endpoints come with v16+)
    EXPECT_EQ(fetch("orders", 0).responses.at(0).partitions.at(0).error_code, 0);

    pr::list_offsets_request lo;
    lo.replica_id = -1;
    auto& lt = lo.topics.emplace_back();
    lt.name = "orders";
    lt.partitions.push_back({0, -1, -1, {}});
    lt.partitions.push_back({1, -1, -1, {}});
    auto lr = call<pr::list_offsets_response>(7, lo);
    EXPECT_EQ(lr.topics[0].partitions[0].error_code, 0);
    EXPECT_EQ(lr.topics[0].partitions[1].error_code, err(error_code::not_leader_or_follower));

    pr::delete_records_request dr;
    auto& dt = dr.topics.emplace_back();
    dt.name = "orders";
    dt.partitions.push_back({1, 0, {}});
    auto drr = call<pr::delete_records_response>(2, dr);
    EXPECT_EQ(drr.topics[0].partitions[0].error_code, err(error_code::not_leader_or_follower));

    pr::offset_for_leader_epoch_request oe;
    auto& ot = oe.topics.emplace_back();
    ot.topic = "orders";
    ot.partitions.push_back({1, -1, 0, {}});
    ot.partitions.push_back({0, -1, 0, {}});
    auto oer = call<pr::offset_for_leader_epoch_response>(4, oe);
    EXPECT_EQ(oer.topics[0].partitions[0].error_code, err(error_code::not_leader_or_follower));
    EXPECT_EQ(oer.topics[0].partitions[1].error_code, 0);
}

TEST_F(cluster_handlers_test, test_fenced_broker_is_not_leader_even_of_its_own_partitions) {
    auto s = three_brokers();
    add(s, topic("orders", {0}));
    set(s);
    store.set_may_lead(false);
    EXPECT_EQ(produce("orders", 0).responses[0].partition_responses[0].error_code,
              err(error_code::not_leader_or_follower));
    EXPECT_EQ(fetch("orders", 0).responses.at(0).partitions.at(0).error_code,
              err(error_code::not_leader_or_follower));
    store.set_may_lead(true);  // the session is confirmed again
    EXPECT_EQ(produce("orders", 0).responses[0].partition_responses[0].error_code, 0);
}

TEST_F(cluster_handlers_test, test_led_partition_whose_log_is_not_open_yet_is_retriable) {
    auto s = three_brokers();
    add(s, topic("fresh", {0}));
    store.set(s);  // no ensure_topic: the logs follow later (replica_sync)
    EXPECT_EQ(produce("fresh", 0).responses[0].partition_responses[0].error_code,
              err(error_code::not_leader_or_follower));
    EXPECT_EQ(fetch("fresh", 0).responses.at(0).partitions.at(0).error_code,
              err(error_code::not_leader_or_follower));
}

TEST_F(cluster_handlers_test, test_create_topics_replication_factor_rules) {
    set(three_brokers());
    auto too_many = create("t4", 1, 4);
    EXPECT_EQ(too_many.topics[0].error_code, err(error_code::invalid_replication_factor));
    EXPECT_EQ(
        too_many.topics[0].error_message,
        std::optional<std::string>("Replication factor: 4 larger than available brokers: 3."));
    auto zero = create("t0", 1, 0);
    EXPECT_EQ(zero.topics[0].error_code, err(error_code::invalid_replication_factor));
    EXPECT_EQ(store.snapshot()->topics.size(), 0u);  // neither was created

    // Replicated topics are created with their replication factor.
    auto replicated = create("t3", 1, 3);
    ASSERT_EQ(replicated.topics[0].error_code, 0)
        << replicated.topics[0].error_message.value_or("");
    EXPECT_EQ(replicated.topics[0].replication_factor, 3);
    EXPECT_EQ(store.last_replication_factor, 3);
    ASSERT_EQ(store.snapshot()->topics.size(), 1u);

    // -1: default.replication.factor (1). Placed over the three brokers; only this broker's
    // replicas get a log here.
    auto ok = create("spread", 3, -1);
    ASSERT_EQ(ok.topics[0].error_code, 0) << ok.topics[0].error_message.value_or("");
    EXPECT_EQ(ok.topics[0].replication_factor, 1);
    EXPECT_TRUE(dir_of("spread", 0));
    EXPECT_FALSE(dir_of("spread", 1));
    EXPECT_FALSE(dir_of("spread", 2));
}

// Kafka marks existing names TOPIC_ALREADY_EXISTS before it validates anything else: a client
// that ensures its RF=3 topic exists while one of three brokers is down must not be told
// INVALID_REPLICATION_FACTOR (the replicated benchmark's producer was).
TEST_F(cluster_handlers_test, test_create_topics_of_an_existing_name_is_already_exists_first) {
    auto s = three_brokers();
    add(s, topic("existing", {0, 1, 2}));
    s.brokers.erase(2);
    set(s);
    for (auto [partitions, replication_factor] : {std::pair{3, 3}, {1, 4}, {0, 1}, {3, -1}}) {
        auto again = create("existing", partitions, static_cast<int16_t>(replication_factor));
        EXPECT_EQ(again.topics[0].error_code, err(error_code::topic_already_exists))
            << partitions << " partitions, RF " << replication_factor;
        EXPECT_EQ(again.topics[0].error_message,
                  std::optional<std::string>("Topic 'existing' already exists."));
    }
    EXPECT_EQ(store.snapshot()->topics.size(), 1u);
}

TEST_F(cluster_handlers_test, test_unreachable_store_is_request_timed_out_with_a_message) {
    set(three_brokers());
    store.fail_next(metadata::errc::unavailable);
    auto r = create("t", 1, 1);
    EXPECT_EQ(r.topics[0].error_code, err(error_code::request_timed_out));
    ASSERT_TRUE(r.topics[0].error_message);
    EXPECT_NE(r.topics[0].error_message->find("unavailable"), std::string::npos);

    store.fail_next(metadata::errc::timed_out);
    r = create("t", 1, 1);
    EXPECT_EQ(r.topics[0].error_code, err(error_code::request_timed_out));

    auto s = three_brokers();
    add(s, topic("grow", {0}));
    set(s);
    store.fail_next(metadata::errc::unavailable);
    pr::create_partitions_request cp;
    cp.timeout_ms = 5000;
    cp.topics.push_back({"grow", 2, std::nullopt, {}});
    auto cpr = call<pr::create_partitions_response>(1, cp);
    EXPECT_EQ(cpr.results[0].error_code, err(error_code::request_timed_out));
}

TEST_F(cluster_handlers_test, test_find_coordinator_names_the_leader_on_another_broker) {
    auto s = three_brokers();
    set(s);
    start_groups();  // creates __consumer_offsets: placed round robin, partition p on broker p
    auto placed = store.snapshot();
    const auto* offsets = placed->find(coordinator::offsets_topic);
    ASSERT_NE(offsets, nullptr);
    // A group id per partition.
    std::map<int32_t, std::string> group_of;
    for (int i = 0; group_of.size() < 3 && i < 1000; ++i) {
        auto g = "group-" + std::to_string(i);
        group_of.emplace(groups->partition_for(g), g);
    }
    ASSERT_EQ(group_of.size(), 3u);
    for (const auto& [p, g] : group_of) {
        pr::find_coordinator_request req;
        req.key = g;
        auto fc = call<pr::find_coordinator_response>(3, req);
        int32_t leader = offsets->partitions[static_cast<size_t>(p)].leader;
        EXPECT_EQ(fc.error_code, 0) << g;
        EXPECT_EQ(fc.node_id, leader);
        EXPECT_EQ(fc.host, leader == 1 ? "h1.plain" : leader == 2 ? "h2.internal" : "h0.plain");
    }
    // The leader of one partition goes away: not available until another broker leads it.
    auto gone = store.copy();
    int32_t p1 = groups->partition_for(group_of[1]);
    gone.topics[std::string(coordinator::offsets_topic)]
        .partitions[static_cast<size_t>(p1)]
        .leader = -1;
    gone.brokers.erase(1);
    store.set(gone);
    pr::find_coordinator_request req;
    req.key_type = 0;
    req.coordinator_keys = {group_of[1], group_of[0]};
    auto fc = call<pr::find_coordinator_response>(4, req);
    ASSERT_EQ(fc.coordinators.size(), 2u);
    EXPECT_EQ(fc.coordinators[0].error_code, err(error_code::coordinator_not_available));
    EXPECT_EQ(fc.coordinators[1].error_code, 0);
    EXPECT_EQ(fc.coordinators[1].node_id, offsets->partitions[0].leader);
}

// Kafka answers FindCoordinator with COORDINATOR_NOT_AVAILABLE while __consumer_offsets cannot be
// created with offsets.topic.replication.factor replicas; so does a cluster broker here, until
// enough brokers registered and the topic exists with exactly that many replicas.
TEST_F(cluster_handlers_test, test_find_coordinator_is_not_available_until_enough_brokers) {
    auto s = three_brokers();
    s.brokers.erase(2);
    s.brokers.erase(1);
    set(s);
    auto sc = coordinator::service_config_from(*config);
    sc.wait_for_replicas = true;  // what metadata.store=etcd sets
    sc.replication_factor = 3;
    start_groups(sc);
    auto find = [&] {
        pr::find_coordinator_request req;
        req.key_type = 0;
        req.coordinator_keys = {"g"};
        auto fc = call<pr::find_coordinator_response>(4, req);
        return fc.coordinators.empty() ? int16_t(-1) : fc.coordinators[0].error_code;
    };
    EXPECT_EQ(find(), 15);  // COORDINATOR_NOT_AVAILABLE
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    EXPECT_EQ(find(), err(error_code::coordinator_not_available));
    EXPECT_EQ(store.snapshot()->find(coordinator::offsets_topic), nullptr);

    store.set(three_brokers());
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (store.snapshot()->find(coordinator::offsets_topic) == nullptr &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_NE(store.snapshot()->find(coordinator::offsets_topic), nullptr);
    EXPECT_EQ(store.last_replication_factor, 3);
    EXPECT_EQ(find(), 0);
}

// A Metadata request that may auto-create topics never creates an internal topic as an ordinary
// one (1 partition, default.replication.factor): __consumer_offsets is the coordinator's to create.
TEST_F(cluster_handlers_test, test_metadata_never_auto_creates_internal_topics) {
    set(three_brokers());
    for (const char* name : {"__consumer_offsets", "__transaction_state"}) {
        pr::metadata_request req;
        req.allow_auto_topic_creation = true;
        req.topics = std::vector<pr::metadata_request::metadata_request_topic>{{{}, name, {}}};
        auto md = call<pr::metadata_response>(12, req);
        ASSERT_EQ(md.topics.size(), 1u);
        EXPECT_EQ(md.topics[0].error_code, std::string(name) == "__consumer_offsets"
                                               ? err(error_code::leader_not_available)
                                               : err(error_code::unknown_topic_or_partition))
            << name;
        EXPECT_TRUE(md.topics[0].is_internal) << name;
        EXPECT_EQ(store.snapshot()->find(name), nullptr) << name;
    }
    // An ordinary name is still auto-created.
    EXPECT_EQ(metadata_of("plain").topics.at(0).error_code, err(error_code::leader_not_available));
    EXPECT_NE(store.snapshot()->find("plain"), nullptr);
}

// KIP-207: a leader whose high watermark is below the start offset of its leader epoch (its
// followers have not caught up with the previous leader's records yet) answers "latest" and
// timestamp lookups with OFFSET_NOT_AVAILABLE (LEADER_NOT_AVAILABLE before v5), so a consumer
// never resets to an offset lower than one it may have seen; "earliest" is answered. As Kafka's
// Partition.fetchOffsetForTimestamp, for clients' requests only.
TEST_F(cluster_handlers_test, test_list_offsets_waits_for_the_new_leaders_high_watermark) {
    auto s = three_brokers();
    auto t = topic("orders", {0});
    t.partitions[0].replicas = {0, 1};
    t.partitions[0].isr = {0, 1};  // broker 1 never fetches here: the HW stays where it is
    t.partitions[0].leader_epoch = 1;
    add(s, t);
    apply(s);
    ASSERT_EQ(produce("orders", 0).responses[0].partition_responses[0].error_code, 0);
    // Epoch 1 began at 0; the HW (0) is not below it: answered, below the unreplicated record.
    EXPECT_EQ(list_offset("orders", 0, -1, 7).error_code, 0);
    EXPECT_EQ(list_offset("orders", 0, -1, 7).offset, 0);

    // Led again at epoch 2, which begins at the log end offset 1, above the HW 0.
    s.topics["orders"].partitions[0].leader_epoch = 2;
    apply(s);
    EXPECT_EQ(list_offset("orders", 0, -1, 7).error_code, err(error_code::offset_not_available));
    EXPECT_EQ(list_offset("orders", 0, -1, 5).error_code, 78);  // OFFSET_NOT_AVAILABLE from v5
    EXPECT_EQ(list_offset("orders", 0, -1, 4).error_code, err(error_code::leader_not_available));
    EXPECT_EQ(list_offset("orders", 0, -1, 1).error_code, err(error_code::leader_not_available));
    EXPECT_EQ(list_offset("orders", 0, 0, 7).error_code, err(error_code::offset_not_available));
    EXPECT_EQ(list_offset("orders", 0, -3, 7).error_code, err(error_code::offset_not_available));
    auto earliest = list_offset("orders", 0, -2, 7);
    EXPECT_EQ(earliest.error_code, 0);
    EXPECT_EQ(earliest.offset, 0);
    EXPECT_EQ(list_offset("orders", 0, -4, 9).error_code, 0);  // earliest-local as well
    // Not a client's request (a debugging tool's replica id -2), or v0: no such check.
    EXPECT_EQ(list_offset("orders", 0, -1, 7, -2).error_code, 0);
    EXPECT_EQ(list_offset("orders", 0, -1, 0).error_code, 0);

    // The ISR shrinks to the leader alone: the HW reaches the log end, past the epoch start.
    s.topics["orders"].partitions[0].isr = {0};
    s.topics["orders"].partitions[0].partition_epoch = 1;
    apply(s);
    auto latest = list_offset("orders", 0, -1, 7);
    EXPECT_EQ(latest.error_code, 0);
    EXPECT_EQ(latest.offset, 1);
    EXPECT_EQ(list_offset("orders", 0, 0, 7).error_code, 0);
}

// ---- authorization (broker/security, docs/security.md) ----

namespace sec = security;

sec::acl_binding binding(sec::resource_type type, std::string name, sec::pattern_type pattern,
                         sec::acl_operation op, sec::acl_permission perm,
                         std::string principal = "User:ANONYMOUS") {
    return {type, std::move(name), pattern, std::move(principal), "*", op, perm};
}

TEST_F(cluster_handlers_test, test_acl_apis_without_an_authorizer_are_security_disabled) {
    set(three_brokers());
    pr::describe_acls_request d;
    d.resource_type_filter = 1;
    d.pattern_type_filter = 1;
    d.operation = 1;
    d.permission_type = 1;
    EXPECT_EQ(call<pr::describe_acls_response>(3, d).error_code,
              err(error_code::security_disabled));
    pr::create_acls_request c;
    c.creations.push_back({2, "t", 3, "User:a", "*", 3, 3, {}});
    auto cr = call<pr::create_acls_response>(3, c);
    ASSERT_EQ(cr.results.size(), 1U);
    EXPECT_EQ(cr.results[0].error_code, err(error_code::security_disabled));
    pr::delete_acls_request del;
    del.filters.push_back({1, std::nullopt, 1, std::nullopt, std::nullopt, 1, 1, {}});
    auto dr = call<pr::delete_acls_response>(3, del);
    ASSERT_EQ(dr.filter_results.size(), 1U);
    EXPECT_EQ(dr.filter_results[0].error_code, err(error_code::security_disabled));
}

TEST_F(cluster_handlers_test, test_acl_apis_create_describe_delete_with_kafkas_filters) {
    svc->authorizer = sec::authorizer({true, {}, false});
    set(three_brokers());
    pr::describe_acls_request any;  // the strings' defaults are "", not null
    any.resource_type_filter = 1;
    any.resource_name_filter = std::nullopt;
    any.pattern_type_filter = 1;
    any.principal_filter = std::nullopt;
    any.host_filter = std::nullopt;
    any.operation = 1;
    any.permission_type = 1;
    // No Describe on the cluster yet.
    EXPECT_EQ(call<pr::describe_acls_response>(3, any).error_code,
              err(error_code::cluster_authorization_failed));
    pr::create_acls_request c;
    c.creations.push_back({2, "t", 3, "User:a", "*", 3, 3, {}});
    auto refused = call<pr::create_acls_response>(3, c);
    ASSERT_EQ(refused.results.size(), 1U);
    EXPECT_EQ(refused.results[0].error_code, err(error_code::cluster_authorization_failed));

    svc->authorizer = sec::authorizer({true, {"User:ANONYMOUS"}, false});
    c.creations.push_back({2, "pre", 4, "User:a", "*", 4, 2, {}});    // prefixed deny
    c.creations.push_back({2, "x", 2, "User:a", "*", 3, 3, {}});      // MATCH: refused
    c.creations.push_back({4, "other", 3, "User:a", "*", 7, 3, {}});  // cluster's one name
    c.creations.push_back({3, "g", 3, "alice", "*", 3, 3, {}});       // no principal type
    auto created = call<pr::create_acls_response>(3, c);
    ASSERT_EQ(created.results.size(), 5U);
    EXPECT_EQ(created.results[0].error_code, 0);
    EXPECT_EQ(created.results[1].error_code, 0);
    for (size_t i = 2; i < 5; ++i) {
        EXPECT_EQ(created.results[i].error_code, err(error_code::invalid_request)) << i;
    }
    EXPECT_EQ(store.snapshot()->acls->size(), 2U);

    auto all = call<pr::describe_acls_response>(3, any);
    EXPECT_EQ(all.error_code, 0);
    EXPECT_EQ(all.resources.size(), 2U);
    pr::describe_acls_request match = any;  // what applies to topic "prefix-1"
    match.resource_type_filter = 2;
    match.resource_name_filter = "prefix-1";
    match.pattern_type_filter = 2;
    auto matched = call<pr::describe_acls_response>(3, match);
    ASSERT_EQ(matched.resources.size(), 1U);
    EXPECT_EQ(matched.resources[0].resource_name, "pre");
    EXPECT_EQ(matched.resources[0].pattern_type, 4);
    ASSERT_EQ(matched.resources[0].acls.size(), 1U);
    EXPECT_EQ(matched.resources[0].acls[0].permission_type, 2);
    pr::describe_acls_request unknown = any;
    unknown.operation = 0;
    EXPECT_EQ(call<pr::describe_acls_response>(3, unknown).error_code,
              err(error_code::invalid_request));

    pr::delete_acls_request del;
    del.filters.push_back({2, std::string("t"), 3, std::nullopt, std::nullopt, 1, 1, {}});
    del.filters.push_back({2, std::nullopt, 0, std::nullopt, std::nullopt, 1, 1, {}});  // unknown
    auto deleted = call<pr::delete_acls_response>(3, del);
    ASSERT_EQ(deleted.filter_results.size(), 2U);
    EXPECT_EQ(deleted.filter_results[0].error_code, 0);
    ASSERT_EQ(deleted.filter_results[0].matching_acls.size(), 1U);
    EXPECT_EQ(deleted.filter_results[0].matching_acls[0].resource_name, "t");
    EXPECT_EQ(deleted.filter_results[1].error_code, err(error_code::invalid_request));
    EXPECT_EQ(store.snapshot()->acls->size(), 1U);
}

// Kafka's ControllerApis.deleteTopics (the authorization matrix found the first case): a name the
// caller may Describe but that does not exist is UNKNOWN_TOPIC_OR_PARTITION; without Describe it
// is TOPIC_AUTHORIZATION_FAILED whether it exists or not; Delete on the cluster (here All) counts
// as Describe and Delete on every topic.
TEST_F(cluster_handlers_test, test_delete_topics_unknown_names_need_describe_cluster_delete_counts) {
    svc->authorizer = sec::authorizer({true, {}, false});
    auto s = three_brokers();
    add(s, topic("seen-kept", {0}));
    add(s, topic("hidden", {0}));
    using rt = sec::resource_type;
    using op = sec::acl_operation;
    s.acls = std::make_shared<const sec::acl_index>(std::vector<sec::acl_binding>{
        binding(rt::topic, "seen-", sec::pattern_type::prefixed, op::describe,
                sec::acl_permission::allow),
        binding(rt::cluster, std::string(sec::cluster_resource_name), sec::pattern_type::literal,
                op::all, sec::acl_permission::allow, "User:root")});
    set(s);
    auto delete_codes = [&](std::vector<std::string> names) {
        pr::delete_topics_request req;
        req.topic_names = names;
        req.timeout_ms = 1000;
        auto resp = call<pr::delete_topics_response>(5, req);
        std::map<std::string, int16_t> out;
        for (const auto& r : resp.responses) {
            out[r.name.value_or("")] = r.error_code;
        }
        return out;
    };
    auto codes = delete_codes({"seen-absent", "absent", "seen-kept", "hidden"});
    EXPECT_EQ(codes["seen-absent"], err(error_code::unknown_topic_or_partition));
    EXPECT_EQ(codes["absent"], err(error_code::topic_authorization_failed));
    EXPECT_EQ(codes["seen-kept"], err(error_code::topic_authorization_failed));
    EXPECT_EQ(codes["hidden"], err(error_code::topic_authorization_failed));
    EXPECT_EQ(store.snapshot()->topics.size(), 2u);

    conn.principal = {"User", "root"};
    EXPECT_EQ(delete_codes({"absent"})["absent"], err(error_code::unknown_topic_or_partition));
}

// WriteTxnMarkers, as Kafka's handleWriteTxnMarkersRequest authorizes it: Alter on the cluster
// (KIP-664: Admin.abortTransaction sends it to a partition's leader), else ClusterAction, else
// every partition CLUSTER_AUTHORIZATION_FAILED. An unknown partition past the check is
// UNKNOWN_TOPIC_OR_PARTITION, so no marker is written here.
TEST_F(cluster_handlers_test, test_write_txn_markers_needs_alter_or_cluster_action) {
    svc->authorizer = sec::authorizer({true, {}, false});
    auto s = three_brokers();
    using rt = sec::resource_type;
    using op = sec::acl_operation;
    const std::string cluster(sec::cluster_resource_name);
    s.acls = std::make_shared<const sec::acl_index>(std::vector<sec::acl_binding>{
        binding(rt::cluster, cluster, sec::pattern_type::literal, op::alter,
                sec::acl_permission::allow, "User:admin"),
        binding(rt::cluster, cluster, sec::pattern_type::literal, op::cluster_action,
                sec::acl_permission::allow, "User:broker"),
        binding(rt::cluster, cluster, sec::pattern_type::literal, op::describe,
                sec::acl_permission::allow, "User:viewer")});
    set(s);
    auto marker_code = [&](const std::string& user) {
        conn.principal = {"User", user};
        pr::write_txn_markers_request req;
        auto& m = req.markers.emplace_back();
        m.producer_id = 4242;
        m.topics.push_back({"absent", {0}, {}});
        auto resp = call<pr::write_txn_markers_response>(1, req);
        return resp.markers.at(0).topics.at(0).partitions.at(0).error_code;
    };
    EXPECT_EQ(marker_code("admin"), err(error_code::unknown_topic_or_partition));
    EXPECT_EQ(marker_code("broker"), err(error_code::unknown_topic_or_partition));
    EXPECT_EQ(marker_code("viewer"), err(error_code::cluster_authorization_failed));
    EXPECT_EQ(marker_code("nobody"), err(error_code::cluster_authorization_failed));
}

TEST_F(cluster_handlers_test, test_produce_fetch_metadata_follow_the_bindings) {
    svc->authorizer = sec::authorizer({true, {}, false});
    auto s = three_brokers();
    add(s, topic("open-1", {0}));
    add(s, topic("open-denied", {0}));
    add(s, topic("hidden", {0}));
    using rt = sec::resource_type;
    using op = sec::acl_operation;
    s.acls = std::make_shared<const sec::acl_index>(
        std::vector<sec::acl_binding>{binding(rt::topic, "open-", sec::pattern_type::prefixed,
                                              op::write, sec::acl_permission::allow),
                                      binding(rt::topic, "open-", sec::pattern_type::prefixed,
                                              op::read, sec::acl_permission::allow),
                                      binding(rt::topic, "open-denied", sec::pattern_type::literal,
                                              op::write, sec::acl_permission::deny),
                                      binding(rt::topic, "hidden", sec::pattern_type::literal,
                                              op::read, sec::acl_permission::allow, "User:alice")});
    set(s);
    auto first = [](const pr::produce_response& r) {
        return r.responses.at(0).partition_responses.at(0).error_code;
    };
    EXPECT_EQ(first(produce("open-1", 0)), 0);
    EXPECT_EQ(first(produce("open-denied", 0)), err(error_code::topic_authorization_failed));
    EXPECT_EQ(first(produce("hidden", 0)), err(error_code::topic_authorization_failed));
    // Refused before it is looked up: an unauthorized caller cannot tell it does not exist.
    EXPECT_EQ(first(produce("absent", 0)), err(error_code::topic_authorization_failed));
    EXPECT_EQ(fetch("open-denied", 0).responses.at(0).partitions.at(0).error_code, 0)
        << "Read through the prefixed Allow (and no records to splice: its Write was denied)";
    EXPECT_EQ(fetch("hidden", 0).responses.at(0).partitions.at(0).error_code,
              err(error_code::topic_authorization_failed));

    pr::metadata_request all;
    all.topics = std::nullopt;  // every topic the caller may describe
    auto listed = call<pr::metadata_response>(12, all);
    std::set<std::string> names;
    for (const auto& t : listed.topics) {
        names.insert(t.name.value_or(""));
    }
    EXPECT_EQ(names, (std::set<std::string>{"open-1", "open-denied"}));
    EXPECT_EQ(metadata_of("hidden").topics.at(0).error_code,
              err(error_code::topic_authorization_failed));
    EXPECT_EQ(metadata_of("open-denied").topics.at(0).error_code, 0)
        << "a Deny of Write leaves the Describe an Allow of Write implies";

    // A follower's fetch needs ClusterAction on the cluster.
    pr::fetch_request follower;
    follower.replica_id = 1;
    follower.max_wait_ms = 0;
    follower.min_bytes = 1;
    follower.max_bytes = 1 << 20;
    follower.session_epoch = -1;
    auto& ft = follower.topics.emplace_back();
    ft.topic = "open-1";
    ft.partitions.emplace_back().partition = 0;
    EXPECT_EQ(call<pr::fetch_response>(12, follower).responses.at(0).partitions.at(0).error_code,
              err(error_code::topic_authorization_failed));
}

}  // namespace
}  // namespace spool::broker::handlers
