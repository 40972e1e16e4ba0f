#pragma once

// The metadata store of a single broker: cluster_state kept in memory and persisted as one
// YAML file in the data directory, rewritten whole on every change (write temp file, fsync,
// rename over the old one, fsync the directory), so a crash leaves either the old or the new
// state, never a mix. Changes are rare (admin operations, producer id chunks), so rewriting the
// whole file is cheap next to the simplicity of having no journal to replay.
//
//     <data dir>/spool-metadata.yaml
//       format: 1
//       cluster_id: <22-char Kafka uuid>
//       next_producer_id: <int64>   (end of the last reserved chunk: producer_id_reserve.h)
//       topics:
//         - {name: t, id: <uuid>, configs: {k: v}, partitions: [{partition: 0, leader: 0,
//            leader_epoch: 0, replicas: [0], isr: [0]}]}
//       broker_configs: {"": {k: v}, "0": {k: v}}
//
// Commits: a change is validated against the last committed state, serialised, written and
// fsynced on the store's own writer thread, one commit at a time in arrival order; only then does
// it become the committed state. A failed write changes nothing. The committing coroutine waits
// without blocking its shard.
//
// Snapshots (snapshot_publisher.h): after a commit the writer publishes the new state to every
// shard of the attached shard_pool, and the committing coroutine waits until every shard shows
// it before it returns, so once a mutation returns, snapshot() on any shard shows it. On a
// shard, snapshot() reads that shard's own copy: no lock, no shared cache line. Other threads
// (HTTP, main) read the latest state under a mutex held only to copy a pointer.
//
// Lifecycle: open() loads or creates the file; attach() before the pool starts; stop() before
// the pool stops (finishes the commit in progress; later commits fail with persist_failed).
// Destroyed after the pool (posted installs reference the store).
// Threading: everything from any thread; see above.

#include "broker/metadata/producer_id_reserve.h"
#include "broker/metadata/snapshot_publisher.h"
#include "broker/metadata/store.h"
#include "broker/runtime/background_pool.h"
#include "broker/runtime/shard_pool.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <variant>

namespace spool::broker::metadata {

class embedded_store final : public store {
public:
    static result<std::unique_ptr<embedded_store>> open(const std::filesystem::path& data_dir);
    ~embedded_store() override;

    // This broker, listed as the one live broker and the controller in every snapshot (not
    // persisted); new partitions are placed on it. Call after open(), before attach(); without it
    // partitions go to node 0 and the snapshot lists no broker.
    void set_local_broker(broker_registration self);
    // Publishes every later commit to each shard of pool, whose snapshot() then reads its own
    // copy. Call before pool.start(); the pool must outlive every commit.
    void attach(runtime::shard_pool& pool);
    void stop();

    cluster_snapshot snapshot() const override;
    op<topic_metadata> create_topic(new_topic t) override;
    op<void> delete_topic(std::string name) override;
    op<topic_metadata> create_partitions(std::string name, int32_t total) override;
    op<void> set_topic_configs(std::string name, config::topic_overrides c) override;
    op<void> set_broker_configs(std::string entity, std::map<std::string, std::string> c) override;
    // From a reserved chunk (producer_id_reserve.h): one commit per million ids, not per block.
    op<producer_id_block> allocate_producer_ids(int32_t count) override;
    // Checked as the etcd store checks it (isr_update_check.h), with this broker the leader;
    // persisted like every other change.
    op<partition_state> alter_isr(isr_update u) override;

    const std::filesystem::path& file() const { return _file; }
    // Version of the snapshot the calling shard reads (for tests of the publication).
    int64_t version_here() const { return snapshot()->version; }

private:
    // A change to the next state: validates against it and edits it, or fails (nothing changes).
    template <class T>
    using change_fn = std::function<result<T>(cluster_state& next)>;
    template <class T>
    struct commit_outcome {
        result<T> value;
        cluster_snapshot published;  // null when nothing was committed
    };

    explicit embedded_store(std::filesystem::path file) : _file(std::move(file)) {}
    // Makes s the committed state and publishes it (latest + every shard).
    void set_committed(cluster_snapshot s);

    // Applies change on the writer thread, persists it and publishes it everywhere.
    template <class T>
    op<T> commit(change_fn<T> change);
    op<void> commit_void(change_fn<std::monostate> change);
    // On the writer thread: copy, change, persist, make it the committed state.
    template <class T>
    commit_outcome<T> apply(const change_fn<T>& change);
    result<void> persist(const cluster_state& next);

    std::filesystem::path _file;
    cluster_snapshot _committed;  // the writer thread's (and open()'s) only
    snapshot_publisher _publisher{nullptr};
    int32_t _local_node = 0;
    std::atomic<bool> _stopped{false};
    producer_id_reserve _producer_ids;
    // Last: stopped and joined first, while everything it uses still exists. Serialising and
    // fsyncing a commit yields the cores to the shards (commits are admin work).
    runtime::background_pool _writer{"metadata", 1, thread_priority::background};
};
// (De)serialisation, exposed for tests.
std::string serialize(const cluster_state& s);
result<cluster_state> deserialize(std::string_view yaml);

}  // namespace spool::broker::metadata
