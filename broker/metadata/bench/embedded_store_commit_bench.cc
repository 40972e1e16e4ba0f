// What one metadata change costs a single broker holding N topics: a CreateTopics of one
// 4-partition topic and the DeleteTopics of it, each committed to disk (fsynced) by the
// embedded store before it returns, as the admin handlers commit them. The store starts from a
// file already holding N topics of 4 partitions and 2 config overrides each.

#include "broker/metadata/embedded/embedded_store.h"
#include "broker/metadata/embedded/metadata_snapshot_file.h"

#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace spool::broker::metadata {
namespace {

namespace fs = std::filesystem;

fs::path store_with_topics(int topics) {
    fs::path dir =
        fs::temp_directory_path() / ("embedded_store_commit_bench_" + std::to_string(::getpid()) +
                                     "_" + std::to_string(topics));
    fs::remove_all(dir);
    fs::create_directories(dir);
    cluster_state s;
    s.cluster_id = protocol::uuid::random().to_string();
    for (int i = 0; i < topics; ++i) {
        topic_metadata t;
        t.name = "topic-" + std::to_string(i);
        t.id = protocol::uuid::random();
        t.configs = {{"retention.ms", "86400000"}, {"cleanup.policy", "delete"}};
        for (int32_t p = 0; p < 4; ++p) {
            partition_state ps;
            ps.partition = p;
            ps.replicas = {0};
            ps.isr = {0};
            t.partitions.push_back(std::move(ps));
        }
        s.topic_names.emplace(t.id, t.name);
        s.topics.emplace(t.name, std::move(t));
    }
    std::ofstream(dir / "spool-metadata.yaml") << serialize(s);
    return dir;
}

void bm_create_and_delete_topic(benchmark::State& state) {
    const auto topics = static_cast<int>(state.range(0));
    auto dir = store_with_topics(topics);
    {
        auto opened = embedded_store::open(dir);
        if (!opened) {
            state.SkipWithError(opened.error().message().c_str());
            return;
        }
        auto store = std::move(opened).value();
        int64_t round = 0;
        for (auto _ : state) {
            auto name = "churn-" + std::to_string(round++);
            new_topic t;
            t.name = name;
            t.partitions = 4;
            t.replication_factor = 1;
            auto created = wait_for(store->create_topic(std::move(t)));
            auto deleted = wait_for(store->delete_topic(name));
            if (!created || !deleted) {
                state.SkipWithError("a commit failed");
                break;
            }
        }
        store->stop();
    }
    fs::remove_all(dir);
}
BENCHMARK(bm_create_and_delete_topic)
    ->Arg(10)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace spool::broker::metadata

BENCHMARK_MAIN();
