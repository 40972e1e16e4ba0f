// coordinator_service over the real runtime: an embedded metadata store, a shard pool, the
// partition manager's storage logs in a temporary directory and real timers. What a broker does
// with __consumer_offsets between start and stop, and across a restart.

#include "broker/coordinator/coordinator_service.h"

#include "broker/coordinator/group_hash.h"
#include "broker/coordinator/tests/coordinator_fixture.h"
#include "broker/metadata/embedded/embedded_store.h"
#include "broker/metrics/group_probe.h"
#include "broker/metrics/registry.h"
#include "broker/runtime/shard_pool.h"
#include "common/testing/temp_dir.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>
#include <prometheus/metric_family.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <optional>
#include <thread>
#include <tuple>

namespace spool::broker::coordinator::testing {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

model::topic_partition tp(std::string t, int32_t p) {
    return {std::move(t), model::partition_id{p}};
}

std::unique_ptr<config::broker_config> make_config(const std::vector<std::string>& overrides) {
    std::string error;
    auto cfg = config::broker_config::from_yaml_text("", overrides, &error);
    EXPECT_TRUE(cfg) << error;
    return cfg;
}

// A broker's runtime minus the network: store -> shards -> logs -> coordinator service, opened
// on a data directory that outlives it (so a second runtime is a restart).
class broker_runtime {
public:
    broker_runtime(const fs::path& dir, service_config sc, metrics::group_probe* probe = nullptr) {
        config = make_config({});
        auto s = metadata::embedded_store::open(dir);
        EXPECT_TRUE(s) << s.error().message();
        store = std::move(s).value();
        pool = std::make_unique<runtime::shard_pool>(2);
        pool->start();
        partitions = std::make_unique<cluster::partition_manager>(*pool, *config, dir);
        auto opened = partitions->open_all(*store->snapshot());
        EXPECT_TRUE(opened);
        service = std::make_unique<coordinator_service>(*store, *partitions, sc, clk, probe);
    }
    ~broker_runtime() {
        if (service && service->started()) {
            service->stop_blocking();
        }
        partitions->close_all();
        pool->stop();
    }

    // Runs fn on the group's owner shard through the service, as a handler does.
    template <class R>
    R call(const std::string& group, coordinator_service::call_fn<R> fn) {
        return asio::co_spawn(pool->executor(0), service->call<R>(group, std::move(fn)),
                              asio::use_future)
            .get();
    }

    std::vector<std::error_code> commit(const std::string& group,
                                        std::vector<offset_commit_entry> entries,
                                        int32_t generation = -1, const std::string& member = "") {
        offset_commit_request req{group, generation, member, std::nullopt, std::move(entries)};
        auto r = call<offset_commit_result>(
            group, [req](group_coordinator* c, std::function<void(offset_commit_result)> done) {
                if (!c) {
                    return done({{make_error_code(errc::not_coordinator)}});
                }
                c->commit_offsets(req, std::move(done));
            });
        return r.errors;
    }

    int64_t fetched(const std::string& group, const model::topic_partition& t) {
        offset_fetch_request req{group,
                                 std::vector<offset_fetch_topic>{{t.topic, {t.partition.value()}}}};
        auto r = call<offset_fetch_result>(
            group, [req](group_coordinator* c, std::function<void(offset_fetch_result)> done) {
                if (!c) {
                    return done({make_error_code(errc::not_coordinator), {}});
                }
                done(c->fetch_offsets(req));
            });
        return r.error || r.offsets.empty() ? -2 : r.offsets[0].offset;
    }

    std::optional<group_state> state(const std::string& group) {
        return call<std::optional<group_state>>(
            group,
            [group](group_coordinator* c, std::function<void(std::optional<group_state>)> done) {
                const class group* g = c ? c->find_group(group) : nullptr;
                done(g ? std::optional(g->state()) : std::nullopt);
            });
    }

    // The log end offset of one __consumer_offsets partition, read on its shard.
    int64_t offsets_log_end(int32_t partition) {
        auto t = tp(std::string(offsets_topic), partition);
        auto* pm = partitions.get();
        auto work = [pm, t]() -> asio::awaitable<int64_t> {
            auto* plog = pm->local(t);
            co_return plog ? plog->log_end_offset().value() : -1;
        };
        return asio::co_spawn(pool->executor(partitions->shard_of(t)), work(), asio::use_future)
            .get();
    }

    // One member joins (KIP-394 off: no MEMBER_ID_REQUIRED round) and syncs: a Stable group.
    // Returns {member id, generation}.
    std::pair<std::string, int32_t> join_and_sync(const std::string& group) {
        join_request j;
        j.group_id = group;
        j.client_id = "client";
        j.client_host = "/127.0.0.1";
        j.session_timeout_ms = 30000;
        j.rebalance_timeout_ms = 30000;
        j.protocol_type = "consumer";
        j.protocols = {{"range", subscription({"orders"})}};
        auto joined = call<join_result>(
            group, [j](group_coordinator* c, std::function<void(join_result)> done) {
                c->join_group(j, std::move(done));
            });
        EXPECT_FALSE(joined.error) << joined.error.message();
        sync_request s;
        s.group_id = group;
        s.generation_id = joined.generation_id;
        s.member_id = joined.member_id;
        s.assignments = {{joined.member_id, bytes{9}}};
        auto synced = call<sync_result>(
            group, [s](group_coordinator* c, std::function<void(sync_result)> done) {
                c->sync_group(s, std::move(done));
            });
        EXPECT_FALSE(synced.error) << synced.error.message();
        return {joined.member_id, joined.generation_id};
    }

    void leave(const std::string& group, const std::string& member) {
        auto r = call<leave_result>(
            group, [group, member](group_coordinator* c, std::function<void(leave_result)> done) {
                done(c->leave_group(group, {{member, std::nullopt}}));
            });
        EXPECT_FALSE(r.error) << r.error.message();
    }

    system_clock clk;
    std::unique_ptr<config::broker_config> config;
    std::unique_ptr<metadata::embedded_store> store;
    std::unique_ptr<runtime::shard_pool> pool;
    std::unique_ptr<cluster::partition_manager> partitions;
    std::unique_ptr<coordinator_service> service;
};

class coordinator_service_test : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(tmp.path().empty());
        sc.partitions = 6;
        sc.coordinator.initial_rebalance_delay_ms = 0;
    }
    void TearDown() override { rt.reset(); }

    broker_runtime& start(metrics::group_probe* probe = nullptr) {
        rt = std::make_unique<broker_runtime>(dir, sc, probe);
        auto ec = rt->service->start_blocking();
        EXPECT_FALSE(ec) << ec.message();
        EXPECT_TRUE(rt->service->started());
        return *rt;
    }

    spool::testing::temp_dir tmp{"spool-coordinator-service-tests"};
    const fs::path& dir = tmp.path();
    service_config sc;
    std::unique_ptr<broker_runtime> rt;
};

// Polls until pred() holds or the deadline passes; real timers drive the coordinator here.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds within) {
    auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) {
            return true;
        }
        std::this_thread::sleep_for(20ms);
    }
    return pred();
}

double rebalances(const metrics::registry& reg, const std::string& group) {
    for (const auto& family : reg.collect()) {
        if (family.name != "spool_consumer_group_rebalances_total") {
            continue;
        }
        for (const auto& m : family.metric) {
            for (const auto& l : m.label) {
                if (l.name == "group" && l.value == group) {
                    return m.counter.value;
                }
            }
        }
    }
    return -1;  // no series
}

TEST_F(coordinator_service_test, test_start_creates_compacted_offsets_topic) {
    auto& r = start();
    auto snap = r.store->snapshot();
    const auto* topic = snap->find(offsets_topic);
    ASSERT_NE(topic, nullptr);
    EXPECT_EQ(topic->partitions.size(), 6u);
    EXPECT_EQ(topic->configs.at("cleanup.policy"), "compact");
    EXPECT_EQ(r.service->partitions(), 6);
}

TEST_F(coordinator_service_test, test_each_group_lands_in_its_hashed_offsets_partition) {
    auto& r = start();
    for (std::string group : {"orders-app", "billing", "g", "analytics-7", "\xc3\xa9quipe"}) {
        const int32_t expected = offsets_partition_for(group, 6);
        EXPECT_EQ(r.service->partition_for(group), expected);
        std::vector<int64_t> before;
        for (int32_t p = 0; p < 6; ++p) {
            before.push_back(r.offsets_log_end(p));
        }
        auto served_by =
            r.call<int32_t>(group, [](group_coordinator* c, std::function<void(int32_t)> done) {
                done(c ? c->partition() : -1);
            });
        EXPECT_EQ(served_by, expected) << group;
        auto errors = r.commit(group, {{tp("orders", 0), 42, -1, {}}});
        ASSERT_EQ(errors.size(), 1u);
        EXPECT_FALSE(errors[0]) << errors[0].message();
        for (int32_t p = 0; p < 6; ++p) {
            EXPECT_EQ(r.offsets_log_end(p), before[static_cast<size_t>(p)] + (p == expected))
                << group << " partition " << p;
        }
        EXPECT_EQ(r.fetched(group, tp("orders", 0)), 42);
    }
}

TEST_F(coordinator_service_test, test_restart_replays_every_committed_offset_and_group) {
    std::vector<std::string> groups;
    for (int i = 0; i < 20; ++i) {
        groups.push_back("group-" + std::to_string(i));
    }
    std::string member;
    int32_t generation = -1;
    {
        auto& r = start();
        std::tie(member, generation) = r.join_and_sync("members");
        ASSERT_EQ(r.state("members"), group_state::stable);
        auto errors = r.commit("members", {{tp("orders", 0), 7, -1, std::string("meta")}},
                               generation, member);
        ASSERT_FALSE(errors.at(0)) << errors[0].message();
        for (size_t i = 0; i < groups.size(); ++i) {
            for (int32_t p = 0; p < 3; ++p) {
                // Commit twice: replay must keep the last value, not the first.
                auto e1 = r.commit(groups[i], {{tp("orders", p), int64_t(i * 10 + p), -1, {}}});
                auto e2 = r.commit(groups[i], {{tp("orders", p), int64_t(i * 100 + p), -1, {}}});
                ASSERT_FALSE(e1.at(0) || e2.at(0));
            }
        }
        rt.reset();  // stop: the service, then the logs and the shards
    }
    auto& r = start();
    for (size_t i = 0; i < groups.size(); ++i) {
        for (int32_t p = 0; p < 3; ++p) {
            EXPECT_EQ(r.fetched(groups[i], tp("orders", p)), int64_t(i * 100 + p))
                << groups[i] << " p" << p;
        }
    }
    EXPECT_EQ(r.fetched("members", tp("orders", 0)), 7);
    EXPECT_EQ(r.state("members"), group_state::stable);
    // The member carries on in its generation after the restart.
    auto hb = r.call<std::error_code>(
        "members",
        [member, generation](group_coordinator* c, std::function<void(std::error_code)> done) {
            done(c->heartbeat({"members", generation, member, std::nullopt}));
        });
    EXPECT_FALSE(hb) << hb.message();
    auto listed = r.service->groups();  // published snapshots after replay
    EXPECT_EQ(listed.size(), groups.size() + 1);
}

TEST_F(coordinator_service_test, test_refuses_start_when_partition_count_changed) {
    start();
    rt.reset();
    sc.partitions = 8;  // groups would hash elsewhere: Kafka refuses too
    rt = std::make_unique<broker_runtime>(dir, sc);
    auto ec = rt->service->start_blocking();
    EXPECT_EQ(ec, make_error_code(errc::coordinator_not_available));
    EXPECT_FALSE(rt->service->started());
}

TEST_F(coordinator_service_test, test_stop_answers_parked_join_and_later_calls_not_coordinator) {
    sc.coordinator.initial_rebalance_delay_ms = 60000;  // the join stays parked
    auto& r = start();
    join_request j;
    j.group_id = "parked";
    j.session_timeout_ms = 30000;
    j.rebalance_timeout_ms = 30000;
    j.protocol_type = "consumer";
    j.protocols = {{"range", subscription({"orders"})}};
    auto parked =
        asio::co_spawn(r.pool->executor(1),
                       r.service->call<join_result>(
                           "parked",
                           [j](group_coordinator* c, std::function<void(join_result)> done) {
                               c->join_group(j, std::move(done));
                           }),
                       asio::use_future);
    ASSERT_TRUE(
        eventually([&] { return r.state("parked") == group_state::preparing_rebalance; }, 10s));
    EXPECT_EQ(parked.wait_for(0s), std::future_status::timeout);
    r.service->stop_blocking();
    ASSERT_EQ(parked.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(parked.get().error, make_error_code(errc::not_coordinator));
    auto errors = r.commit("parked", {{tp("orders", 0), 1, -1, {}}});
    EXPECT_EQ(errors.at(0), make_error_code(errc::not_coordinator));
    EXPECT_TRUE(r.service->groups().empty());
}

TEST_F(coordinator_service_test, test_empty_group_offsets_expire_on_the_check_interval) {
    sc.coordinator.offsets_retention_ms = 300;
    sc.coordinator.retention_check_interval_ms = 100;
    metrics::registry reg;
    metrics::group_probe probe(reg);
    auto& r = start(&probe);
    auto [member, generation] = r.join_and_sync("expiring");
    EXPECT_EQ(rebalances(reg, "expiring"), 1.0);  // the probe heard the completed generation
    ASSERT_FALSE(r.commit("expiring", {{tp("orders", 0), 5, -1, {}}}, generation, member).at(0));
    // A group with members keeps its offsets however old they are (KIP-211).
    std::this_thread::sleep_for(600ms);
    EXPECT_EQ(r.fetched("expiring", tp("orders", 0)), 5);
    r.leave("expiring", member);
    EXPECT_TRUE(eventually([&] { return r.state("expiring") != group_state::stable; }, 10s));
    ASSERT_TRUE(eventually([&] { return r.fetched("expiring", tp("orders", 0)) == -1; }, 15s));
    EXPECT_EQ(r.state("expiring"), std::nullopt);  // offset-less and empty: removed
    EXPECT_EQ(rebalances(reg, "expiring"), -1.0);  // and its series dropped
    rt.reset();
    auto& again = start();  // the tombstones hold across a restart
    EXPECT_EQ(again.fetched("expiring", tp("orders", 0)), -1);
    EXPECT_EQ(again.state("expiring"), std::nullopt);
}

TEST_F(coordinator_service_test, test_expiry_waits_for_the_retention_check) {
    // Offsets are long past retention, but the next check is a minute away: they stay until then.
    sc.coordinator.offsets_retention_ms = 1;
    sc.coordinator.retention_check_interval_ms = 60000;
    auto& r = start();
    ASSERT_FALSE(r.commit("simple", {{tp("orders", 0), 3, -1, {}}}).at(0));
    std::this_thread::sleep_for(1500ms);
    EXPECT_EQ(r.fetched("simple", tp("orders", 0)), 3);
}

TEST_F(coordinator_service_test, test_deleted_group_is_forgotten_by_the_probe) {
    metrics::registry reg;
    metrics::group_probe probe(reg);
    auto& r = start(&probe);
    auto [member, generation] = r.join_and_sync("doomed");
    EXPECT_EQ(rebalances(reg, "doomed"), 1.0);
    r.leave("doomed", member);
    auto ec = r.call<std::error_code>(
        "doomed", [](group_coordinator* c, std::function<void(std::error_code)> done) {
            c->delete_group("doomed", std::move(done));
        });
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(rebalances(reg, "doomed"), -1.0);
    EXPECT_EQ(r.state("doomed"), std::nullopt);
}

TEST(service_config, test_offsets_keys_default_as_in_kafka) {
    auto cfg = make_config({});
    auto sc = service_config_from(*cfg);
    EXPECT_EQ(sc.partitions, 50);
    EXPECT_EQ(sc.coordinator.offsets_retention_ms, 7LL * 24 * 3600 * 1000);
    EXPECT_EQ(sc.coordinator.retention_check_interval_ms, 600000);
    EXPECT_EQ(sc.coordinator.max_metadata_bytes, 4096);
}

TEST(service_config, test_offsets_keys_follow_overrides) {
    auto cfg =
        make_config({"offsets.retention.check.interval.ms=2500", "offset.metadata.max.bytes=10",
                     "offsets.retention.minutes=3", "offsets.topic.num.partitions=4"});
    auto sc = service_config_from(*cfg);
    EXPECT_EQ(sc.partitions, 4);
    EXPECT_EQ(sc.coordinator.offsets_retention_ms, 180000);
    EXPECT_EQ(sc.coordinator.retention_check_interval_ms, 2500);
    EXPECT_EQ(sc.coordinator.max_metadata_bytes, 10);
}

TEST_F(coordinator_service_test, test_metadata_limit_from_config_rejects_only_that_partition) {
    auto cfg = make_config({"offset.metadata.max.bytes=10", "offsets.topic.num.partitions=6"});
    sc = service_config_from(*cfg);
    auto& r = start();
    auto errors = r.commit("meta", {{tp("orders", 0), 1, -1, std::string(11, 'x')},
                                    {tp("orders", 1), 2, -1, std::string(10, 'y')},
                                    {tp("orders", 2), 3, -1, std::nullopt}});
    ASSERT_EQ(errors.size(), 3u);
    EXPECT_EQ(errors[0], make_error_code(errc::offset_metadata_too_large));
    EXPECT_FALSE(errors[1]);
    EXPECT_FALSE(errors[2]);
    EXPECT_EQ(r.fetched("meta", tp("orders", 0)), -1);
    EXPECT_EQ(r.fetched("meta", tp("orders", 1)), 2);
    EXPECT_EQ(r.fetched("meta", tp("orders", 2)), 3);
}

}  // namespace
}  // namespace spool::broker::coordinator::testing
