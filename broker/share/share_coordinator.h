#pragma once

// The state machine of one __share_group_state partition (Kafka's ShareCoordinatorShard): the
// latest state of every share-partition whose key hashes here, each change appended as a
// ShareSnapshot record (record_codec.h) and applied only once the append is committed.
//
//   write(key, state)     fenced: a leader epoch below the stored one (FENCED_LEADER_EPOCH), a
//                         state epoch below it (FENCED_STATE_EPOCH); else the whole state is
//                         written as a snapshot (the data partition's leader sends it whole)
//   read(key, epoch)      the state, or start offset -1 when the key has none (Kafka's
//                         "uninitialized"); a leader epoch above the stored one is written first,
//                         so a deposed leader's later writes are fenced
//   initialize(key, ...)  a new state at a start offset, state epoch as given (the admin reset)
//   remove(key)           a tombstone
//
// Replay (load) applies snapshots, Kafka's ShareUpdate records and tombstones in log order.
//
// Threading: the owner shard of the partition only; callbacks run there (possibly inline).
// Lifecycle: construct unloaded -> load() -> serve -> unload() (pending appends then answer
// not_coordinator) -> load() ...

#include "broker/coordinator/clock.h"
#include "broker/coordinator/group_log.h"
#include "broker/share/share_state.h"
#include "common/result.h"

#include <functional>
#include <map>
#include <memory>
#include <system_error>

namespace spool::broker::share {

class share_coordinator {
public:
    using done_fn = std::function<void(std::error_code)>;
    using read_fn = std::function<void(result<share_state>)>;

    share_coordinator(int32_t partition, const coordinator::clock& clk, coordinator::group_log& log)
        : _partition(partition), _clock(clk), _log(log),
          _generation(std::make_shared<uint64_t>(0)) {}

    std::error_code load();
    void unload();
    [[nodiscard]] bool loaded() const { return _loaded; }
    [[nodiscard]] int32_t partition() const { return _partition; }

    void write(const share_key& key, share_state next, done_fn done);
    void read(const share_key& key, int32_t leader_epoch, read_fn done);
    void initialize(const share_key& key, int32_t state_epoch, int64_t start_offset, done_fn done);
    void remove(const share_key& key, done_fn done);

    // For tests and the summary: the committed state of a key, nullptr when none.
    [[nodiscard]] const share_state* find(const share_key& key) const;
    [[nodiscard]] size_t size() const { return _states.size(); }

private:
    // Appends the key's new state (nullopt: a tombstone) and applies it once committed.
    void append(const share_key& key, std::optional<share_state> next, done_fn done);

    int32_t _partition;
    const coordinator::clock& _clock;
    coordinator::group_log& _log;
    bool _loaded = false;
    std::map<share_key, share_state> _states;
    // Bumped at every unload: an append completing after it finds another generation.
    std::shared_ptr<uint64_t> _generation;
};

}  // namespace spool::broker::share
