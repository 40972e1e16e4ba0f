#pragma once

// The metadata store of a single broker: cluster_state kept in memory and persisted in the data
// directory as a snapshot and a journal of the commits since (KRaft's metadata log and snapshots,
// on one broker):
//
//     <data dir>/spool-metadata.yaml                 the snapshot (metadata_snapshot_file.h)
//     <data dir>/spool-metadata-<first seq>.log      the journal (metadata_journal.h, _file.h)
//
// Commits: a change is validated against the last committed state; what it changed (a topic, a
// broker config entity, the next producer id) is appended to the journal as one line and
// fdatasynced, on the store's own writer thread, one commit at a time in arrival order; only
// then does it become the committed state. A failed append changes nothing. The committing
// coroutine waits without blocking its shard. A commit costs the size of its change: with
// 10,000 topics, rewriting the whole file took 4.5 s per commit (bench/).
//
// Snapshot files: once the journal holds as many bytes as the last snapshot (and at least
// journal_snapshot_bytes), later records go to a new journal file and the state as of the last
// record is written as the snapshot on a thread of its own; the older journal files are then
// deleted. A clean stop folds the journal into the snapshot. open() loads the snapshot, replays
// the journal after it (a torn last line, an append a crash cut short, is dropped; any other
// damage refuses to start), and folds it in.
//
// Publication (snapshot_publisher.h): after a commit the writer publishes the new state to every
// shard of the attached shard_pool, and the committing coroutine waits until every shard shows
// it before it returns, so once a mutation returns, snapshot() on any shard shows it. On a
// shard, snapshot() reads that shard's own copy: no lock, no shared cache line. Other threads
// (HTTP, main) read the latest state under a mutex held only to copy a pointer.
//
// Lifecycle: open() loads or creates the files; attach() before the pool starts; stop() before
// the pool stops (finishes the commit in progress and the snapshot under way, folds the journal
// in; later commits fail with persist_failed).
// Destroyed after the pool (posted installs reference the store).
// Threading: everything from any thread; see above.

#include "broker/metadata/embedded/metadata_journal_file.h"
#include "broker/metadata/producer_id_reserve.h"
#include "broker/metadata/snapshot_publisher.h"
#include "broker/metadata/store.h"
#include "broker/runtime/background_pool.h"
#include "broker/runtime/shard_pool.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <variant>

namespace spool::broker::metadata {

struct embedded_store_options {
    // The least journal size (bytes) that makes a snapshot due; it is also due only once the
    // journal is as big as the last snapshot, so snapshots cost O(1) per committed byte.
    uint64_t journal_snapshot_bytes = 1U << 20;
    // When open() refuses the stored feature levels (errc::unsupported_feature_level), why, in
    // words (features.h unsupported_reason): spool-broker's termination message. May be null.
    std::string* refusal = nullptr;
};

class embedded_store final : public store {
public:
    static result<std::unique_ptr<embedded_store>> open(const std::filesystem::path& data_dir,
                                                        embedded_store_options options = {});
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
    op<void> write_features(finalized_features current, finalized_features next) override;
    op<void> create_acls(std::vector<security::acl_binding> bindings) override;
    op<void> delete_acls(std::vector<security::acl_binding> bindings) override;
    op<void> set_group_configs(std::string group, std::map<std::string, std::string> c) override;
    op<void> set_user_scram_credentials(std::string user,
                                        std::map<std::string, std::string> c) override;
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

    embedded_store(std::filesystem::path dir, embedded_store_options options)
        : _dir(std::move(dir)), _file(_dir / "spool-metadata.yaml"), _options(options) {}
    // Makes s the committed state and publishes it (latest + every shard).
    void set_committed(cluster_snapshot s);

    // Applies change on the writer thread, persists it and publishes it everywhere.
    template <class T>
    op<T> commit(change_fn<T> change);
    op<void> commit_void(change_fn<std::monostate> change);
    // On the writer thread: copy, change, persist, make it the committed state.
    template <class T>
    commit_outcome<T> apply(const change_fn<T>& change);
    // On the writer thread: appends what turns before into next to the journal.
    result<void> persist(const cluster_state& before, const cluster_state& next);
    // On the writer thread, after a commit: starts a new journal file and writes the snapshot of
    // `committed` on the snapshot thread, when one is due and none is under way.
    void snapshot_if_due(cluster_snapshot committed);

    std::filesystem::path _dir;
    std::filesystem::path _file;  // the snapshot
    embedded_store_options _options;
    // The writer thread's (and open()'s and stop()'s) only:
    cluster_snapshot _committed;
    std::optional<journal::journal_file> _journal;
    int64_t _seq = 0;  // of the last journalled record
    // Shared with the snapshot thread:
    std::atomic<uint64_t> _snapshot_bytes{0};  // the size of the last snapshot written
    std::atomic<int64_t> _snapshot_seq{0};     // the last record it includes
    std::atomic<bool> _snapshotting{false};
    snapshot_publisher _publisher{nullptr};
    int32_t _local_node = 0;
    std::atomic<bool> _stopped{false};
    producer_id_reserve _producer_ids;
    // Last: stopped and joined first, while everything they use still exists. Commits and
    // snapshots yield the cores to the shards (they are admin work).
    runtime::background_pool _snapshotter{"metadata-snap", 1, thread_priority::background};
    runtime::background_pool _writer{"metadata", 1, thread_priority::background};
};

}  // namespace spool::broker::metadata
