#pragma once

// The transaction coordinator of one __transaction_state partition: the transactional ids that
// hash to it (txn_hash.h), their state (txn_metadata.h), its persistence as records in the
// partition (record_codec.h) and the commit/abort markers (marker_sender.h). Kafka's
// TransactionCoordinator + TransactionStateManager for one partition, transaction protocol v1
// (the client adds partitions with AddPartitionsToTxn and ends with EndTxn) and v2 (KIP-890
// part 2: partition leaders add partitions on the producer's behalf, and every EndTxn bumps the
// producer epoch).
//
//   InitProducerId  new id: Empty, epoch 0 | Empty/Complete*: epoch+1 (or a new producer id when
//                   the epoch is exhausted) | Ongoing: fence (epoch+1, PrepareAbort, markers),
//                   answer CONCURRENT_TRANSACTIONS, the client retries | Prepare*: CONCURRENT_
//   AddPartitions   Empty/Complete*/Ongoing -> Ongoing (written) | Prepare*: CONCURRENT_
//   EndTxn          Ongoing -> Prepare* (written, then answered) -> markers -> Complete* (written)
//   EndTxn, TV2     as above with Prepare* under epoch+1 (the markers carry it, the answer
//                   names it); an exhausted epoch moves to next_producer_id at Complete* (epoch
//                   0). A retry (the epoch before the bump) answers the current id and epoch.
//                   Empty/Complete* under the current epoch: an empty Prepare* with the bump
//                   (the client cannot know whether its produce added a partition).
//   timeouts        Ongoing past transaction.timeout.ms: fenced and aborted as above
//   expiry          Empty/Complete* idle for transactional.id.expiration.ms: tombstone, forgotten
//
// Every change is written to the log before it is applied or answered; while a write is in
// flight the id answers CONCURRENT_TRANSACTIONS. A Prepare* state found at load has its markers
// sent again. Time comes from the injected clock; the owner calls poll() at next_deadline().
//
// Threading: the partition's owner shard only, like group_coordinator; callbacks (log appends,
// marker completions) arrive on that shard. Lifecycle: construct unloaded -> load() -> serve ->
// unload() (answers nothing pending: their completions answer not_coordinator) -> load() ...

#include "broker/coordinator/clock.h"
#include "broker/coordinator/group_log.h"
#include "broker/txn/errc.h"
#include "broker/txn/marker_sender.h"
#include "broker/txn/txn_counters.h"
#include "broker/txn/txn_metadata.h"
#include "common/result.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace spool::broker::txn {

using coordinator::time_ms;

struct txn_config {
    int32_t max_timeout_ms = 900000;                  // transaction.max.timeout.ms
    int64_t id_expiration_ms = 604800000;             // transactional.id.expiration.ms
    int64_t abort_check_interval_ms = 10000;          // ...abort.timed.out.transaction.cleanup...
    int64_t expire_check_interval_ms = 3600000;       // ...remove.expired.transaction.cleanup...
};

struct init_request {
    std::string transactional_id;
    int32_t timeout_ms = 0;
    // KIP-360: the producer's current id and epoch when it re-initialises after an error.
    int64_t producer_id = no_producer_id;
    int16_t producer_epoch = no_producer_epoch;
    // A producer id drawn by the caller, used when the id is new or its epoch is exhausted (the
    // allocator is asynchronous; the coordinator is not).
    int64_t fresh_producer_id = no_producer_id;
};

struct init_result {
    std::error_code error;
    int64_t producer_id = no_producer_id;
    int16_t producer_epoch = no_producer_epoch;
};

struct txn_ref {
    std::string transactional_id;
    int64_t producer_id = no_producer_id;
    int16_t producer_epoch = no_producer_epoch;
};

// transaction.version as a client uses it: 2 bumps the epoch at every EndTxn (EndTxn v5+) and
// lets partition leaders add partitions (Produce v12+, TxnOffsetCommit v5+).
inline constexpr int16_t txn_version_epoch_bump = 2;

struct end_request {
    txn_ref ref;
    bool commit = false;
    int16_t client_txn_version = 0;
    // A producer id drawn by the caller for a TV2 EndTxn whose bumped epoch exhausts the current
    // one (the caller draws it when the producer's epoch is INT16_MAX - 1 or more).
    int64_t fresh_producer_id = no_producer_id;
};

// The producer id and epoch the client continues with (TV2: after the bump or the rotation).
struct end_result {
    std::error_code error;
    int64_t producer_id = no_producer_id;
    int16_t producer_epoch = no_producer_epoch;
};

class txn_coordinator {
public:
    using error_callback = std::function<void(std::error_code)>;

    txn_coordinator(int32_t partition, txn_config config, const coordinator::clock& clk,
                    coordinator::group_log& log, marker_sender& markers);
    ~txn_coordinator();
    txn_coordinator(const txn_coordinator&) = delete;
    txn_coordinator& operator=(const txn_coordinator&) = delete;

    // Replays the log (the last record of each id wins; tombstones forget) and starts serving;
    // Prepare* transactions get their markers again. coordinator_epoch: the partition's leader
    // epoch, sent with the markers so partition leaders can ignore an older coordinator.
    std::error_code load(int32_t coordinator_epoch);
    void unload();
    [[nodiscard]] bool loaded() const { return _loaded; }
    // Where this coordinator counts for the broker's metrics (nullptr: nowhere); set before
    // load(). Shared by every coordinator of the broker.
    void set_counters(txn_counters* counters) { _counters = counters; }
    [[nodiscard]] int32_t partition() const { return _partition; }

    void init_producer_id(init_request req, std::function<void(init_result)> done);
    // client_txn_version: 2 when a partition leader adds on a TV2 producer's behalf; recorded
    // with the transaction it starts.
    void add_partitions(txn_ref ref, std::vector<txn_partition> partitions, error_callback done,
                        int16_t client_txn_version = 0);
    // AddPartitionsToTxn v4+ verifyOnly: no change; per partition none or invalid_txn_state.
    using verify_result = std::pair<std::error_code, std::map<txn_partition, std::error_code>>;
    [[nodiscard]] verify_result verify_partitions(const txn_ref& ref,
                                                  const std::vector<txn_partition>& partitions);
    void end_txn(txn_ref ref, bool commit, error_callback done);
    void end_txn(end_request req, std::function<void(end_result)> done);

    // DescribeTransactions / ListTransactions: the state as stored.
    [[nodiscard]] result<txn_metadata> describe(const std::string& transactional_id) const;
    [[nodiscard]] std::vector<txn_metadata> list() const;

    // Timeout aborts and expiry when due; the owner calls it at next_deadline().
    void poll();
    [[nodiscard]] std::optional<time_ms> next_deadline() const;

private:
    struct entry {
        txn_metadata meta;
        bool pending = false;         // a write of this id is in flight
        bool markers_done = false;  // Prepare*: every marker written, Complete* not yet
    };

    // Writes `next` for its id (or a tombstone), applies it when durable and calls done.
    void write(txn_metadata next, bool tombstone, error_callback done);
    // Prepare* written: send the markers, then write Complete*.
    void send_markers(const std::string& transactional_id);
    void complete(const std::string& transactional_id);
    // Writes Prepare* for the TV2 end of e (epoch bumped, next_producer_id when exhausted).
    void prepare_v2(entry& e, const end_request& req, std::function<void(end_result)> done);
    // Ongoing -> PrepareAbort with the epoch bumped (a zombie's InitProducerId, or a timeout).
    void fence_and_abort(entry& e, error_callback done);
    std::error_code check(const txn_ref& ref, entry*& out, bool strict_epoch);
    [[nodiscard]] int64_t now_ms() const { return _clock.now().count(); }
    void abort_timed_out();
    void expire_idle();
    // Counts a state change (from -> to; to nullopt: forgotten) in _counters.
    void count(std::optional<txn_state> from, std::optional<txn_state> to);

    int32_t _partition;
    txn_config _config;
    const coordinator::clock& _clock;
    coordinator::group_log& _log;
    marker_sender& _markers;
    bool _loaded = false;
    int32_t _coordinator_epoch = 0;
    // Bumped at each load/unload: completions of an older incarnation answer not_coordinator.
    std::shared_ptr<uint64_t> _generation;
    std::map<std::string, entry> _txns;
    int64_t _next_abort_check_ms = 0;
    int64_t _next_expire_check_ms = 0;
    txn_counters* _counters = nullptr;
};

}  // namespace spool::broker::txn
