#include "broker/cluster/partition_manager.h"

#include "broker/metadata/embedded/embedded_store.h"
#include "broker/storage/checkpoint_file.h"
#include "broker/storage/layout.h"
#include "protocol/records/batch_builder.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace spool::broker::cluster {
namespace {

namespace asio = boost::asio;
namespace fs = std::filesystem;
using model::topic_partition;

asio::awaitable<int64_t> append_one(partition_manager* pm, topic_partition tp, std::string value) {
    protocol::records::batch_builder b;
    b.add(1000, protocol::records::nullable_bytes::null(),
          protocol::records::nullable_bytes::of(value));
    auto bytes = b.build();
    auto* plog = pm->local(tp);
    if (plog == nullptr) {
        co_return -100;
    }
    auto r = plog->append(bytes, model::leader_epoch(0));
    if (!r) {
        co_return -1;
    }
    plog->set_high_watermark(plog->log_end_offset());
    co_return r.value().base_offset.value();
}

asio::awaitable<int64_t> end_offset(partition_manager* pm, topic_partition tp) {
    auto* plog = pm->local(tp);
    co_return plog == nullptr ? -100 : plog->log_end_offset().value();
}

asio::awaitable<int64_t> on_shard(partition_manager* pm, topic_partition tp,
                                  asio::awaitable<int64_t> work) {
    co_return co_await runtime::run_on(pm->pool().executor(pm->shard_of(tp)), std::move(work));
}

class partition_manager_test : public ::testing::Test {
protected:
    void SetUp() override {
        dir =
            fs::path(::testing::TempDir()) /
            ("pm_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        fs::remove_all(dir);
        std::string error;
        cfg = config::broker_config::from_yaml_text("", {}, &error);
        pool = std::make_unique<runtime::shard_pool>(2);
        pool->start();
    }
    void TearDown() override {
        pool->stop();
        fs::remove_all(dir);
    }

    int64_t run(topic_partition tp, asio::awaitable<int64_t> work) {
        return asio::co_spawn(pool->context(0), on_shard(pm.get(), tp, std::move(work)),
                              asio::use_future)
            .get();
    }

    fs::path dir;
    std::unique_ptr<config::broker_config> cfg;
    std::unique_ptr<runtime::shard_pool> pool;
    std::unique_ptr<partition_manager> pm;
};

TEST_F(partition_manager_test, test_topic_partitions_are_created_on_their_owner_shards) {
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(metadata::cluster_state{}));
    metadata::topic_metadata t{
        "orders", protocol::uuid::random(), {{0, 0, 0, {0}, {0}}, {1, 0, 0, {0}, {0}}}, {}};
    auto ec = asio::co_spawn(pool->context(0), pm->ensure_topic(t), asio::use_future).get();
    ASSERT_FALSE(ec) << ec.message();
    EXPECT_TRUE(fs::exists(dir / "orders-0"));
    EXPECT_TRUE(fs::exists(dir / "orders-1"));
    topic_partition tp1{"orders", model::partition_id(1)};
    EXPECT_EQ(run(tp1, append_one(pm.get(), tp1, "a")), 0);
    EXPECT_EQ(run(tp1, append_one(pm.get(), tp1, "b")), 1);
    pm->close_all();
}

TEST_F(partition_manager_test, test_concurrent_ensures_of_one_topic_open_each_log_once) {
    // A handler and replica_sync both bring a new topic's logs in: neither may open the files
    // the other is opening, and both return once the logs are open.
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(metadata::cluster_state{}));
    std::vector<protocol::uuid> ids;
    for (int round = 0; round < 20; ++round) {
        std::string name = "race" + std::to_string(round);
        ids.push_back(protocol::uuid::random());
        metadata::topic_metadata t{
            name, ids.back(), {{0, 0, 0, {0}, {0}}, {1, 0, 0, {0}, {0}}, {2, 0, 0, {0}, {0}}}, {}};
        auto a = asio::co_spawn(pool->context(0), pm->ensure_topic(t), asio::use_future);
        auto b = asio::co_spawn(pool->context(1), pm->ensure_topic(t), asio::use_future);
        ASSERT_FALSE(a.get());
        ASSERT_FALSE(b.get());
        for (int32_t p = 0; p < 3; ++p) {
            topic_partition tp{name, model::partition_id(p)};
            EXPECT_EQ(run(tp, append_one(pm.get(), tp, "v")), 0) << name << "-" << p;
        }
    }
    pm->close_all();
    // Every log closed cleanly with its record: reopening finds them all.
    metadata::cluster_state state;
    for (int round = 0; round < 20; ++round) {
        std::string name = "race" + std::to_string(round);
        // The same topics (ids): a new id would be another topic of the name, set aside.
        state.topics.emplace(name,
                             metadata::topic_metadata{
                                 name, ids[static_cast<size_t>(round)], {{0, 0, 0, {0}, {0}}}, {}});
    }
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(state));
    for (int round = 0; round < 20; ++round) {
        topic_partition tp{"race" + std::to_string(round), model::partition_id(0)};
        EXPECT_EQ(run(tp, end_offset(pm.get(), tp)), 1);
    }
    pm->close_all();
}

TEST_F(partition_manager_test, test_clean_close_writes_marker_and_reopen_keeps_data) {
    metadata::cluster_state state;
    state.topics.emplace(
        "t", metadata::topic_metadata{"t", protocol::uuid::random(), {{0, 0, 0, {0}, {0}}}, {}});
    topic_partition tp{"t", model::partition_id(0)};
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(state));
    EXPECT_FALSE(fs::exists(dir / storage::layout::clean_shutdown_marker));
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(run(tp, append_one(pm.get(), tp, "v")), i);
    }
    pm->close_all();
    EXPECT_TRUE(fs::exists(dir / storage::layout::clean_shutdown_marker));
    pm.reset();

    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(state));
    EXPECT_FALSE(fs::exists(dir / storage::layout::clean_shutdown_marker));
    EXPECT_EQ(run(tp, end_offset(pm.get(), tp)), 3);
    pm->close_all();
}

TEST_F(partition_manager_test, test_removed_topic_loses_its_directories) {
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(metadata::cluster_state{}));
    metadata::topic_metadata t{"gone", protocol::uuid::random(), {{0, 0, 0, {0}, {0}}}, {}};
    ASSERT_FALSE(asio::co_spawn(pool->context(0), pm->ensure_topic(t), asio::use_future).get());
    asio::co_spawn(pool->context(1), pm->remove_topic("gone", 1), asio::use_future).get();
    EXPECT_FALSE(fs::exists(dir / "gone-0"));
    topic_partition tp{"gone", model::partition_id(0)};
    EXPECT_EQ(run(tp, end_offset(pm.get(), tp)), -100);
    // A topic of the same name right away gets a fresh directory of its own.
    ASSERT_FALSE(asio::co_spawn(pool->context(0), pm->ensure_topic(t), asio::use_future).get());
    EXPECT_TRUE(fs::exists(dir / "gone-0"));
    asio::co_spawn(pool->context(1), pm->remove_topic("gone", 1), asio::use_future).get();
    // The renamed directories are removed off the shards; close_all() lets that finish.
    pm->close_all();
    for (const auto& de : fs::directory_iterator(dir)) {
        EXPECT_FALSE(de.path().filename().string().starts_with("gone-0")) << de.path();
    }
}

TEST_F(partition_manager_test,
       test_a_deleted_topic_leaves_the_checkpoints_and_costs_a_write_only_if_named) {
    metadata::cluster_state state;
    state.topics.emplace("old", metadata::topic_metadata{
                                    "old", protocol::uuid::random(), {{0, 0, 0, {0}, {0}}}, {}});
    topic_partition old_tp{"old", model::partition_id(0)};
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(state));
    EXPECT_EQ(run(old_tp, append_one(pm.get(), old_tp, "v")), 0);
    pm->close_all();  // the clean close names old-0 in every checkpoint file
    pm.reset();
    auto names = [&](const topic_partition& tp) {
        auto r = storage::read_offset_checkpoint(dir / storage::layout::log_start_checkpoint);
        EXPECT_TRUE(r);
        return r && r.value().contains(tp);
    };
    ASSERT_TRUE(names(old_tp));

    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(state));
    auto forget = [&](const std::string& name) {
        asio::co_spawn(pool->context(0), pm->remove_topic(name, 1), asio::use_future).get();
        return asio::co_spawn(pool->context(0),
                              pm->forget_in_checkpoints(partition_manager::partitions_of(name, 1)),
                              asio::use_future)
            .get();
    };
    // Named by the files read at start: rewritten without it before the answer.
    EXPECT_FALSE(forget("old"));
    EXPECT_FALSE(names(old_tp));
    // Created and deleted between periodic writes (60 s): no file names it, nothing is written.
    auto written_at = fs::last_write_time(dir / storage::layout::log_start_checkpoint);
    metadata::topic_metadata churn{"churn", protocol::uuid::random(), {{0, 0, 0, {0}, {0}}}, {}};
    ASSERT_FALSE(asio::co_spawn(pool->context(0), pm->ensure_topic(churn), asio::use_future).get());
    EXPECT_FALSE(forget("churn"));
    EXPECT_EQ(fs::last_write_time(dir / storage::layout::log_start_checkpoint), written_at);
    pm->close_all();
}

// Issue #14 item 7: a CreateTopics/DeleteTopics loop must not make the file system allocate and
// free inodes (on ext4 without a journal each allocation scans past every recently freed one).
TEST_F(partition_manager_test, test_a_deleted_empty_topics_files_become_the_next_topics) {
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(metadata::cluster_state{}));
    auto inode = [](const fs::path& p) {
        struct stat st {};
        return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
    };
    auto files_of = [&](const std::string& topic) {
        std::map<fs::path, ino_t> out;
        for (int p = 0; p < 4; ++p) {
            fs::path partition = dir / (topic + "-" + std::to_string(p));
            out[partition] = inode(partition);
            for (const auto& e : fs::directory_iterator(partition)) {
                // partition.metadata names its topic: always written anew, never a spare.
                if (e.path().filename() == storage::layout::partition_metadata_file) {
                    continue;
                }
                out[e.path()] = inode(e.path());
            }
        }
        return out;
    };
    auto spares = [&] {
        size_t n = 0;
        for (const auto& e : fs::directory_iterator(dir)) {
            n +=
                e.path().filename().string().starts_with(storage::file_recycler::spare_file_prefix);
        }
        return n;
    };
    // Waits (at most 10 s) for the flusher's leader-epoch checkpoints of topic's 4 partitions.
    auto wait_for_checkpoints = [&](const std::string& topic) {
        for (int i = 0; i < 1000; ++i) {
            int found = 0;
            for (int p = 0; p < 4; ++p) {
                found += fs::exists(dir / (topic + "-" + std::to_string(p)) /
                                    storage::layout::leader_epoch_checkpoint);
            }
            if (found == 4) {
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    };
    auto wait_for_spares = [&](size_t n) {
        for (int i = 0; i < 1000 && spares() != n; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return spares();
    };
    auto topic = [](const std::string& name) {
        metadata::topic_metadata t{name, protocol::uuid::random(), {}, {}};
        for (int32_t p = 0; p < 4; ++p) {
            t.partitions.push_back({p, 0, 0, {0}, {0}});
        }
        return t;
    };
    auto ensure = [&](const metadata::topic_metadata& t) {
        return asio::co_spawn(pool->context(0), pm->ensure_topic(t), asio::use_future).get();
    };
    auto remove = [&](const std::string& name) {
        asio::co_spawn(pool->context(0), pm->remove_topic(name, 4), asio::use_future).get();
    };

    ASSERT_FALSE(ensure(topic("first")));
    ASSERT_TRUE(wait_for_checkpoints("first"));
    auto old_files = files_of("first");
    // The directories, and in each .log, .index, .timeindex and leader-epoch-checkpoint.
    ASSERT_EQ(old_files.size(), 20u);
    std::set<ino_t> old_inodes;
    for (const auto& [path, ino] : old_files) {
        old_inodes.insert(ino);
    }
    remove("first");
    EXPECT_EQ(wait_for_spares(16), 16u);

    ASSERT_FALSE(ensure(topic("second")));
    ASSERT_TRUE(wait_for_checkpoints("second"));
    for (const auto& [path, ino] : files_of("second")) {
        EXPECT_TRUE(old_inodes.contains(ino)) << path << " was allocated, not reused";
    }
    EXPECT_EQ(spares(), 0u);

    // A topic that held a record gives nothing: its files are deleted.
    topic_partition tp{"second", model::partition_id(0)};
    ASSERT_EQ(run(tp, append_one(pm.get(), tp, "kept")), 0);
    remove("second");
    // The 3 empty partitions' 12 files are given; partition 0's are not.
    EXPECT_EQ(wait_for_spares(12), 12u);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(spares(), 12u);
    pm->close_all();
}

TEST_F(partition_manager_test, test_namesake_created_while_a_removal_renames_starts_empty) {
    // The removal renames the directory off the shard; a topic of the same name ensured
    // meanwhile (from the other shard) must wait for it and never open the old files.
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(metadata::cluster_state{}));
    topic_partition tp{"again", model::partition_id(0)};
    for (int round = 0; round < 100; ++round) {
        metadata::topic_metadata t{"again", protocol::uuid::random(), {{0, 0, 0, {0}, {0}}}, {}};
        ASSERT_FALSE(asio::co_spawn(pool->context(0), pm->ensure_topic(t), asio::use_future).get());
        ASSERT_EQ(run(tp, append_one(pm.get(), tp, "old")), 0) << round;
        auto removed = asio::co_spawn(pool->context(pm->shard_of(tp)), pm->remove_topic("again", 1),
                                      asio::use_future);
        metadata::topic_metadata fresh{
            "again", protocol::uuid::random(), {{0, 0, 0, {0}, {0}}}, {}};
        auto created = asio::co_spawn(pool->context(1 - pm->shard_of(tp)), pm->ensure_topic(fresh),
                                      asio::use_future);
        removed.get();
        ASSERT_FALSE(created.get());
        // Either the create came first (and the removal took its log) or it came after the
        // rename: it never sees the old record.
        int64_t end = run(tp, end_offset(pm.get(), tp));
        EXPECT_TRUE(end == 0 || end == -100) << round << ": " << end;
        if (end == 0) {
            asio::co_spawn(pool->context(0), pm->remove_topic("again", 1), asio::use_future).get();
        }
    }
    pm->close_all();
}

asio::awaitable<int64_t> append_keyed(partition_manager* pm, topic_partition tp, std::string key,
                                      int count) {
    auto* plog = pm->local(tp);
    if (plog == nullptr) {
        co_return -100;
    }
    for (int i = 0; i < count; ++i) {
        // The first batch comes from an idempotent producer, long idle by its timestamp.
        protocol::records::batch_options o;
        if (i == 0) {
            o.producer_id = 42;
            o.producer_epoch = 0;
            o.base_sequence = 0;
        }
        protocol::records::batch_builder b(o);
        b.add(1000 + i, protocol::records::nullable_bytes::of(key + std::to_string(i % 4)),
              protocol::records::nullable_bytes::of(std::string(100, 'v')));
        auto bytes = b.build();
        if (!plog->append(bytes, model::leader_epoch(0))) {
            co_return -1;
        }
        if (i == 0 && plog->producers().size() != 1) {
            co_return -2;  // the idempotent producer was not recorded
        }
    }
    plog->set_high_watermark(plog->log_end_offset());
    co_return plog->log_end_offset().value();
}

// What housekeeping has done to a log so far: its start offset, size and cleaned offset.
struct log_state {
    int64_t start = -1;
    uint64_t bytes = 0;
    int64_t cleaned = -1;
    size_t segments = 0;
    size_t producers = 0;
};

asio::awaitable<log_state> state_of(partition_manager* pm, topic_partition tp) {
    auto* plog = pm->local(tp);
    if (plog == nullptr) {
        co_return log_state{};
    }
    co_return log_state{plog->log_start_offset().value(), plog->size_bytes(),
                        plog->cleaned_offset().value(), plog->segment_count(),
                        plog->producers().size()};
}

asio::awaitable<log_state> state_on_shard(partition_manager* pm, topic_partition tp) {
    co_return co_await runtime::run_on(pm->pool().executor(pm->shard_of(tp)), state_of(pm, tp));
}

// Housekeeping applies retention by size to compact,delete topics, never to compact ones (but
// still expires idle producers there), and compacts both; the compacted offset survives a restart
// in cleaner-offset-checkpoint.
TEST_F(partition_manager_test, test_housekeeping_applies_retention_per_cleanup_policy) {
    std::string error;
    cfg =
        config::broker_config::from_yaml_text("log.retention.check.interval.ms: 50\n", {}, &error);
    ASSERT_NE(cfg, nullptr) << error;
    auto topic = [](std::string name, std::string policy) {
        return metadata::topic_metadata{name,
                                        protocol::uuid::random(),
                                        {{0, 0, 0, {0}, {0}}},
                                        1,
                                        {{"cleanup.policy", policy},
                                         {"segment.bytes", "1024"},
                                         {"retention.bytes", "2048"},
                                         {"retention.ms", "-1"},
                                         {"min.cleanable.dirty.ratio", "0.01"}}};
    };
    metadata::cluster_state state;
    state.topics.emplace("both", topic("both", "compact,delete"));
    state.topics.emplace("compacted", topic("compacted", "compact"));
    topic_partition both{"both", model::partition_id(0)};
    topic_partition compacted{"compacted", model::partition_id(0)};
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(state));
    EXPECT_GT(run(both, append_keyed(pm.get(), both, "k", 60)), 0);
    EXPECT_GT(run(compacted, append_keyed(pm.get(), compacted, "k", 60)), 0);
    auto get = [&](const topic_partition& tp) {
        return asio::co_spawn(pool->context(0), state_on_shard(pm.get(), tp), asio::use_future)
            .get();
    };
    // Wait (generously: a loaded machine) for both logs to be compacted and "both" trimmed.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    log_state b;
    log_state c;
    while (std::chrono::steady_clock::now() < deadline) {
        b = get(both);
        c = get(compacted);
        if (b.start > 0 && b.cleaned > 0 && c.cleaned > 0 && c.producers == 0) {
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_GT(b.start, 0) << "compact,delete: size retention never ran";
    EXPECT_GT(b.cleaned, 0) << "compact,delete: never compacted";
    EXPECT_GT(c.cleaned, 0) << "compact: never compacted";
    EXPECT_EQ(c.start, 0) << "compact: segments deleted by retention";
    // apply_retention() runs for compact too: it expires idle producers.
    EXPECT_EQ(c.producers, 0u) << "compact: producer.id.expiration.ms not applied";
    pm->close_all();
    pm.reset();

    auto saved = storage::read_offset_checkpoint(dir / storage::layout::cleaner_checkpoint);
    ASSERT_TRUE(saved);
    ASSERT_EQ(saved.value().count(compacted), 1u);
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    ASSERT_TRUE(pm->open_all(state));
    EXPECT_EQ(get(compacted).cleaned, saved.value().at(compacted).value());
    pm->close_all();
}

asio::awaitable<int64_t> leader_append(partition_manager* pm, topic_partition tp) {
    protocol::records::batch_builder b;
    b.add(1000, protocol::records::nullable_bytes::null(),
          protocol::records::nullable_bytes::of(std::string("v")));
    auto bytes = b.build();
    auto* p = pm->partition_here(tp);
    if (p == nullptr) {
        co_return -100;
    }
    auto r = p->append_as_leader(bytes, 1, 1);
    co_return r ? r.value().base_offset.value() : -1;
}

asio::awaitable<int64_t> follower_fetched(partition_manager* pm, topic_partition tp,
                                          int32_t replica, int64_t offset) {
    auto* p = pm->partition_here(tp);
    if (p == nullptr) {
        co_return -100;
    }
    (void)p->on_follower_fetch(replica, model::offset(offset), -1);
    co_return p->high_watermark().value();
}

asio::awaitable<int64_t> high_watermark(partition_manager* pm, topic_partition tp) {
    auto* p = pm->partition_here(tp);
    co_return p == nullptr ? -100 : p->high_watermark().value();
}

asio::awaitable<int64_t> needs_truncation(partition_manager* pm, topic_partition tp) {
    auto* p = pm->partition_here(tp);
    co_return p == nullptr ? -100 : int64_t(p->needs_truncation());
}

struct role_event {
    replication::partition_role role;
    int32_t leader;
    int32_t epoch;
    bool operator==(const role_event&) const = default;
};

TEST_F(partition_manager_test, test_partitions_follow_their_records_and_keep_the_hw_checkpoint) {
    const auto self = static_cast<int32_t>(cfg->node_id());
    topic_partition tp{"r", model::partition_id(0)};
    auto topic = [&](int32_t leader, int32_t epoch, std::vector<int32_t> isr) {
        return metadata::topic_metadata{
            "r", protocol::uuid(), {{0, leader, epoch, epoch, {self, 11, 12}, isr}}, 3, {}};
    };
    std::mutex mu;
    std::vector<role_event> events;
    auto listen = [&](const topic_partition& t, replication::partition_role role, int32_t leader,
                      int32_t epoch) {
        EXPECT_EQ(t, tp);
        EXPECT_EQ(runtime::shard_pool::current_shard(), pm->shard_of(tp)) << "the owner shard";
        std::lock_guard lock(mu);
        events.push_back({role, leader, epoch});
    };
    metadata::cluster_state state;
    state.topics.emplace("r", topic(self, 1, {self, 11}));
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    pm->set_role_listener(listen);
    ASSERT_TRUE(pm->open_all(state));
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(run(tp, leader_append(pm.get(), tp)), i);
    }
    // Follower 11 of the ISR has not fetched: nothing is committed; its fetch commits.
    EXPECT_EQ(run(tp, high_watermark(pm.get(), tp)), 0);
    EXPECT_EQ(run(tp, follower_fetched(pm.get(), tp, 11, 2)), 2);
    pm->close_all();
    auto hw = storage::read_offset_checkpoint(dir / storage::layout::high_watermark_checkpoint);
    ASSERT_TRUE(hw);
    EXPECT_EQ(hw.value().at(tp), model::offset(2));

    // Reopened as a follower: the checkpointed high watermark, and truncation first.
    state.topics.clear();
    state.topics.emplace("r", topic(11, 2, {self, 11}));
    pm = std::make_unique<partition_manager>(*pool, *cfg, dir);
    pm->set_role_listener(listen);
    ASSERT_TRUE(pm->open_all(state));
    EXPECT_EQ(run(tp, high_watermark(pm.get(), tp)), 2);
    EXPECT_EQ(run(tp, needs_truncation(pm.get(), tp)), 1);
    EXPECT_EQ(run(tp, leader_append(pm.get(), tp)), -1) << "a follower refuses produce";
    // Leader again, alone in the ISR: everything it has is committed.
    asio::co_spawn(pool->context(0), pm->apply_assignments(topic(self, 3, {self})),
                   asio::use_future)
        .get();
    EXPECT_EQ(run(tp, high_watermark(pm.get(), tp)), 3);
    asio::co_spawn(pool->context(0), pm->remove_topic("r", 1), asio::use_future).get();
    pm->close_all();
    std::lock_guard lock(mu);
    using replication::partition_role;
    EXPECT_EQ(events, (std::vector<role_event>{{partition_role::leader, self, 1},
                                               {partition_role::follower, 11, 2},
                                               {partition_role::leader, self, 3},
                                               {partition_role::none, -1, 3}}));
}

TEST(to_log_config, test_topic_settings_map_onto_storage_fields) {
    config::topic_settings s;
    s.segment_bytes = 2048;
    s.retention_ms = std::chrono::milliseconds(5);
    s.cleanup_compact = true;
    s.cleanup_delete = true;
    s.log_append_time = true;
    s.min_compaction_lag_ms = std::chrono::milliseconds(7);
    s.min_cleanable_dirty_ratio = 0.25;
    auto c = to_log_config(s);
    EXPECT_EQ(c.min_compaction_lag_ms.count(), 7);
    EXPECT_DOUBLE_EQ(c.min_cleanable_dirty_ratio, 0.25);
    EXPECT_EQ(c.segment_bytes, 2048u);
    EXPECT_EQ(c.retention_ms.count(), 5);
    EXPECT_EQ(c.cleanup, storage::cleanup_policy::compact_delete);
    EXPECT_EQ(c.message_timestamp_type, storage::timestamp_type::log_append_time);
}

}  // namespace
}  // namespace spool::broker::cluster
