#pragma once

// Keeps the local partitions (replication::partition: log, high watermark, role) in step with the
// metadata store and routes work to each partition's owner shard. Every partition belongs to one
// shard (shard_pool::shard_for); its partition_log lives in that shard's table and is only touched
// there, so no lock guards a log. Callers on any shard reach a partition with co_await
// run_on(executor_for(tp), work(...)), where work calls local(tp) (the log) or partition_here(tp)
// (the partition).
//
// Each partition follows its record in the metadata: apply_assignments() (replica_sync, on every
// change) and the opens (once, from the state they open from) hand it partition_state; the role
// listener hears of every role, leader or epoch change. High watermark moves wake fetches.
//
// What spans all logs of the directory (the clean-shutdown marker, the checkpoints and their
// writer, the flusher, the recycler, the background and cleaner threads) is storage::log_dir's;
// this class hands it what only the shards know: the checkpoint values (gathered by message to
// each shard) and the logs it closed. It also runs per-shard housekeeping (flush.ms, retention
// for every cleanup.policy, compaction passes on the log_dir's cleaner lane, ISR checks),
// renames deleted partitions' directories ("<dir>.<id>-delete", off the shard, so a topic of the
// same name can be created at once) before the log_dir removes them, and keeps the
// fetch_wakeups of every shard, which wake long-polling fetches after appends.
//
// Lifecycle: construct -> open_all() (blocking, before the listener starts) -> serve ->
// close_all() (blocking, after the listener drained). The shard_pool must run in between.
// Threading: open_all/close_all from main; create/remove/update from any coroutine (they hop to
// the owners); local() and fetch_wakeups_here() only on the owning/current shard.

#include "broker/cluster/fetch_wakeups.h"
#include "broker/config/broker_config.h"
#include "broker/metadata/cluster_state.h"
#include "broker/replication/partition.h"
#include "broker/runtime/async_event.h"
#include "broker/runtime/background_pool.h"
#include "broker/runtime/shard_pool.h"
#include "broker/storage/checkpoint_writer.h"
#include "broker/storage/config.h"
#include "broker/storage/log_dir.h"
#include "broker/storage/observer.h"
#include "broker/storage/partition_log.h"
#include "common/result.h"

#include <atomic>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace spool::broker::cluster {

// The log settings of a topic from its effective configuration.
storage::log_config to_log_config(const config::topic_settings& s);

class partition_manager {
public:
    partition_manager(runtime::shard_pool& pool, const config::broker_config& config,
                      std::filesystem::path log_dir);
    ~partition_manager();

    // Where storage reports fsync latency, errors, rolls and a failed log dir (the broker's
    // storage metrics and storage::log_dir_failure, which halts it): every log, the flusher and
    // the checkpoint writer report to it. Set before open_all(). Kept until they are gone.
    void set_storage_observer(std::shared_ptr<storage::storage_observer> observer) {
        _dir->set_observer(std::move(observer));
    }

    // Called on the partition's owner shard after apply() changed its role, leader or leader
    // epoch (and once for every partition opened as follower), and with role none before it is
    // removed (not at close_all()). Set before open_all().
    using role_listener =
        std::function<void(const model::topic_partition&, replication::partition_role,
                           int32_t leader, int32_t leader_epoch)>;
    void set_role_listener(role_listener l) { _role_listener = std::move(l); }
    // Where leaders write ISR changes (cluster::partition_isr_writer); before open_all(). Must
    // outlive the partitions. nullptr: no ISR change is ever proposed.
    void set_isr_writer(replication::isr_writer* writer) { _isr_writer = writer; }

    // Opens (and recovers) every partition in `state` this broker is a replica of.
    result<void> open_all(const metadata::cluster_state& state);
    // Closes every log, writes the checkpoints and, if all closed cleanly, the marker.
    void close_all();

    // Creates the logs of the topic's partitions this broker is a replica of (node.id in their
    // replicas; unplaced ones are skipped) that do not exist yet. Idempotent.
    boost::asio::awaitable<std::error_code> ensure_topic(metadata::topic_metadata topic);
    // Whether this broker keeps a log of p (node.id is one of its replicas).
    bool hosts(const metadata::partition_state& p) const;
    // Closes and deletes the logs of a topic's partitions; with only_id, only logs opened for
    // that topic id (so removing a deleted topic never takes the logs of a namesake created
    // since, whose logs this broker may already have opened).
    boost::asio::awaitable<void> remove_topic(std::string name, int32_t partitions,
                                              std::optional<protocol::uuid> only_id = {});
    // Closes and deletes the logs of the topic's placed partitions this broker is no longer a
    // replica of (a reassignment dropped it; Kafka deletes such a replica too); true when it
    // removed any. Only logs opened for the topic's id.
    boost::asio::awaitable<bool> remove_unhosted(metadata::topic_metadata topic);
    // Writes the four checkpoints with values gathered after this call (off the shards); the
    // error of the write, if any. DeleteRecords answers only after this.
    boost::asio::awaitable<std::error_code> write_checkpoints();
    // After remove_topic(): the checkpoint files stop naming the removed partitions, which
    // costs a write only when a file names one of them (checkpoint_writer::request_forget).
    boost::asio::awaitable<std::error_code> forget_in_checkpoints(
        std::vector<model::topic_partition> removed);
    static std::vector<model::topic_partition> partitions_of(const std::string& name,
                                                             int32_t partitions);
    // Hands each hosted partition of the topic its partition_state, on its owner shard.
    boost::asio::awaitable<void> apply_assignments(metadata::topic_metadata topic);
    // The metadata version the local logs were last brought in line with (replica_sync sets it
    // after each round). A handler holding a newer snapshot may find a partition that snapshot
    // says this broker leads not open yet, or not yet leading here: catch_up() brings the topic
    // in line first, as replica_sync's next round will (ensure_topic, then apply_assignments;
    // both idempotent, and an older assignment never replaces a newer one).
    int64_t logs_version() const { return _logs_version.load(std::memory_order_acquire); }
    void set_logs_version(int64_t version) {
        _logs_version.store(version, std::memory_order_release);
    }
    boost::asio::awaitable<std::error_code> catch_up(metadata::topic_metadata topic);
    // Applies changed topic configs to the topic's logs.
    boost::asio::awaitable<void> update_topic_config(metadata::topic_metadata topic);

    size_t shard_of(const model::topic_partition& tp) const {
        return _pool.shard_for(tp.topic, tp.partition.value());
    }
    runtime::shard_pool& pool() { return _pool; }
    // The log on the calling shard, or nullptr (no such partition, or not owned here). The
    // table keeps the only owning pointer and frees the log in remove_topic() and close_all(),
    // both of which run on this shard between two of its handlers: use the pointer only until
    // the caller next suspends or returns, and look it up again afterwards (never store it;
    // coordinator::partition_group_log shows how a long-lived user does this).
    storage::partition_log* local(const model::topic_partition& tp);
    // The partition on the calling (owner) shard, or nullptr; the same lifetime rules as local().
    replication::partition* partition_here(const model::topic_partition& tp);
    // Whether pred holds for every partition this broker leads, on every shard (pred runs on
    // each partition's owner shard; it must only read the partition).
    using led_predicate = std::function<bool(const replication::partition&)>;
    boost::asio::awaitable<bool> every_led_partition(const led_predicate& pred);
    // Wakes fetches waiting on any shard; call after appends.
    void notify_data_arrived();
    // Wakes only followers' fetches (they read to the log end, consumers to the high
    // watermark): after a leader append that has not moved the high watermark yet, so
    // consumers' polls are not woken for records they may not read.
    void notify_replica_fetches();
    // The calling shard's wake-ups, for a long-polling fetch's data_waiter: a follower's
    // (replica) or a consumer's.
    std::shared_ptr<fetch_wakeups> fetch_wakeups_here(bool replica = false);
    // Stops long polls early: set at shutdown, fetches answer at once.
    bool stopping() const { return _stopping.load(std::memory_order_relaxed); }
    void begin_stop();

    const std::filesystem::path& log_dir() const { return _dir->path(); }

    // Any thread (metrics): the transactions open in the partitions this broker leads, as each
    // shard's housekeeping last counted them (every 5 s). oldest_last_write_ms is the oldest last
    // write of their producers (-1: none open), what a hanging-transaction alert compares with
    // transaction.max.timeout.ms.
    struct open_transactions_report {
        int64_t count = 0;
        int64_t oldest_last_write_ms = -1;
    };
    open_transactions_report open_transactions() const;

private:
    // Without replica_sync (tests) the logs are taken to follow every snapshot.
    std::atomic<int64_t> _logs_version{std::numeric_limits<int64_t>::max()};
    // Shared with the shard's housekeeping coroutine, which may wake after this manager is
    // gone: it checks `stopped` before touching the manager again.
    struct housekeeping_control {
        std::atomic<bool> stopped{false};
        boost::asio::steady_timer* timer = nullptr;  // the coroutine's; shard thread only
    };

    struct shard_table {
        shard_table(runtime::shard_pool& pool, size_t shard)
            : opening_done(pool.executor(shard)),
              wakeups(std::make_shared<fetch_wakeups>(pool.executor(shard), &pool, shard)),
              replica_wakeups(std::make_shared<fetch_wakeups>(pool.executor(shard), &pool, shard)) {
        }
        std::unordered_map<model::topic_partition, std::unique_ptr<replication::partition>>
            partitions;
        // The topic id each log was opened for (a name can be deleted and created again).
        std::unordered_map<model::topic_partition, protocol::uuid> topic_ids;
        // Logs an ensure_topic call is opening off the shard right now: a concurrent call for
        // the same partition (a handler and replica_sync) waits for it instead of opening the
        // same files a second time; opening_done wakes it.
        std::unordered_set<model::topic_partition> opening;
        runtime::async_event opening_done;
        std::shared_ptr<fetch_wakeups> wakeups;          // consumers' fetches
        std::shared_ptr<fetch_wakeups> replica_wakeups;  // followers' fetches
        std::shared_ptr<housekeeping_control> housekeeping =
            std::make_shared<housekeeping_control>();
        // The led partitions' open transactions at the last housekeeping count (metrics).
        std::atomic<int64_t> open_txns{0};
        std::atomic<int64_t> oldest_open_txn_write_ms{-1};
    };

    storage::open_options options_for(const model::topic_partition& tp, size_t shard);
    storage::log_config log_config_of(const config::topic_overrides& overrides) const;
    // Opens (creating or recovering) a log for `shard`; any thread, before the shard owns it.
    // sole_isr: this broker is the partition's whole ISR (its high watermark is its LEO).
    // A directory another topic of the same name left (its partition.metadata names another
    // id) is set aside as stray first, so topic_id's log opens empty (partition_metadata.h).
    result<std::unique_ptr<storage::partition_log>> open_log(size_t shard,
                                                             const model::topic_partition& tp,
                                                             const protocol::uuid& topic_id,
                                                             const storage::log_config& cfg,
                                                             bool sole_isr);
    result<void> open_on_shard(size_t shard, const model::topic_partition& tp,
                               const storage::log_config& cfg, const protocol::uuid& topic_id,
                               const metadata::partition_state& state);
    std::unique_ptr<replication::partition> make_partition(
        size_t shard, std::unique_ptr<storage::partition_log> log);
    // apply() plus the role listener; on p's owner shard.
    void apply_here(replication::partition& p, const metadata::partition_state& state);
    bool sole_isr(const metadata::partition_state& p) const;
    static boost::asio::awaitable<void> apply_on_shard(
        partition_manager* self,
        std::vector<std::pair<model::topic_partition, metadata::partition_state>> s);
    // On the writer thread: every shard's checkpoint values, collected on the shards.
    storage::log_dir_checkpoints gather_checkpoints();
    // A write of all the files (nullopt) or request_forget(removed).
    boost::asio::awaitable<std::error_code> checkpoint_request(
        std::optional<std::vector<model::topic_partition>> removed);
    struct opened_logs {
        std::vector<std::unique_ptr<storage::partition_log>> logs;
        protocol::uuid topic_id;
        const metadata::topic_metadata* topic =
            nullptr;                                  // the partitions' states, applied at install
        std::vector<model::topic_partition> claimed;  // marked opening by this call
        std::error_code error;
    };
    // Keeps (and marks opening) the partitions the shard does not have and nobody opens yet;
    // moves those another call is opening to *busy.
    static boost::asio::awaitable<int> missing_on_shard(partition_manager* self, size_t shard,
                                                        std::vector<model::topic_partition>* tps,
                                                        std::vector<model::topic_partition>* busy);
    // Waits until no call is opening any of tps.
    static boost::asio::awaitable<int> wait_opened(partition_manager* self, size_t shard,
                                                   const std::vector<model::topic_partition>* tps);
    // Takes logs opened off the shard into its table.
    static boost::asio::awaitable<int> install_on_shard(partition_manager* self, size_t shard,
                                                        opened_logs* opened);
    static boost::asio::awaitable<void> remove_on_shard(partition_manager* self,
                                                        std::vector<model::topic_partition> tps,
                                                        std::optional<protocol::uuid> only_id);
    static boost::asio::awaitable<int> count_on_shard(partition_manager* self,
                                                      std::vector<model::topic_partition> tps);
    static boost::asio::awaitable<void> update_on_shard(partition_manager* self,
                                                        std::vector<model::topic_partition> tps,
                                                        storage::log_config cfg);
    static boost::asio::awaitable<void> housekeeping(partition_manager* self, size_t shard);
    static boost::asio::awaitable<bool> every_led_on_shard(partition_manager* self,
                                                           const led_predicate* pred);

    runtime::shard_pool& _pool;
    const config::broker_config& _config;
    std::unique_ptr<storage::log_dir> _dir;
    std::vector<std::unique_ptr<shard_table>> _shards;
    role_listener _role_listener;
    replication::isr_writer* _isr_writer = nullptr;
    std::atomic<bool> _stopping{false};
};

}  // namespace spool::broker::cluster
