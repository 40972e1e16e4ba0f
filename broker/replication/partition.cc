// partition: role changes (apply), the leader's produce path, the ISR and the high watermark.
// Commit waiters are in partition_waiters.cc, the follower's side in partition_follower.cc.

#include "broker/replication/partition.h"

#include "common/log.h"
#include "protocol/records/batch_builder.h"

#include <algorithm>

namespace spool::broker::replication {

namespace {

bool contains(const std::vector<int32_t>& v, int32_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// Whether `next` is older than what the partition already follows: a snapshot raced by a newer
// one (replica_sync and a handler's ensure_topic may both apply), never to be applied over it.
bool older(const partition_assignment& next, const partition_assignment& current) {
    if (next.leader_epoch != current.leader_epoch) {
        return next.leader_epoch < current.leader_epoch;
    }
    return next.partition_epoch < current.partition_epoch;
}

}  // namespace

partition::partition(std::unique_ptr<storage::partition_log> log,
                     boost::asio::io_context::executor_type owner, partition_options options)
    : _log(std::move(log)), _owner(owner), _options(std::move(options)), _waiter_timer(owner) {}

partition::~partition() {
    *_alive = false;
    fail_waiters(errc::not_leader_or_follower);
}

partition_role partition::role_for(const partition_assignment& a, int32_t self) {
    if (a.leader == self && self >= 0) {
        return partition_role::leader;
    }
    return contains(a.replicas, self) ? partition_role::follower : partition_role::none;
}

void partition::apply(const partition_assignment& assignment) {
    if (_applied_once && older(assignment, _assignment)) {
        return;
    }
    const auto before = _assignment;
    const auto before_role = _role;
    const bool first = !_applied_once;
    _applied_once = true;
    _assignment = assignment;
    _role = role_for(assignment, _options.self);

    const bool new_term = first || before_role != _role || before.leader != assignment.leader ||
                          before.leader_epoch != assignment.leader_epoch;
    if (_isr_in_flight &&
        (new_term || assignment.partition_epoch > _isr_in_flight->partition_epoch)) {
        // The metadata now shows the change (or a newer term made it moot).
        _isr_in_flight.reset();
    }
    switch (_role) {
        case partition_role::leader:
            if (new_term) {
                become_leader();
            } else {
                sync_followers(false);
                forget_removed_members(before.isr);
            }
            // A smaller ISR (or one member) may let the high watermark move at once.
            maybe_advance_high_watermark();
            complete_waiters();
            break;
        case partition_role::follower:
            if (new_term) {
                become_follower();
            }
            break;
        case partition_role::none:
            if (new_term) {
                fail_waiters(errc::not_leader_or_follower);
                _followers.clear();
                _needs_truncation = false;
                _share.clear();
            }
            break;
    }
}

void partition::become_leader() {
    // Every batch from here on carries the new epoch; the epoch starts at our log end offset,
    // which is what OffsetForLeaderEpoch answers followers of the previous epoch (KIP-101).
    _leader_epoch_start = _log->log_end_offset();
    if (auto r = _log->begin_leader_epoch(model::leader_epoch(_assignment.leader_epoch)); !r) {
        log::get("replication")
            ->error("{}: cannot start leader epoch {}: {}", ntp().dir_name(),
                    _assignment.leader_epoch, r.error().message());
    }
    _needs_truncation = false;
    sync_followers(true);
    log::get("replication")
        ->info("{}: leader at epoch {} from offset {}, {} in the ISR", ntp().dir_name(),
               _assignment.leader_epoch, _leader_epoch_start.value(), _assignment.isr.size());
}

void partition::become_follower() {
    fail_waiters(errc::not_leader_or_follower);
    _share.clear();  // a later leadership reads it back from the share coordinator
    _followers.clear();
    // KIP-101/279: the fetcher asks the new leader where our log diverges before fetching.
    _needs_truncation = true;
}

void partition::sync_followers(bool reset) {
    const auto now = _options.clock();
    if (reset) {
        _followers.clear();
    }
    std::erase_if(_followers, [&](const follower_progress& f) {
        return !contains(_assignment.replicas, f.replica);
    });
    for (int32_t r : _assignment.replicas) {
        if (r == _options.self || follower(r) != nullptr) {
            continue;
        }
        follower_progress f;
        f.replica = r;
        // Kafka's resetReplicaState: ISR members get a fresh lag window, or a new leader would
        // shrink them before they had a chance to fetch.
        if (contains(_assignment.isr, r)) {
            f.last_caught_up = now;
        }
        _followers.push_back(f);
    }
}

void partition::forget_removed_members(const std::vector<int32_t>& previous_isr) {
    // A member the metadata took out of the ISR (the controller fenced a new incarnation of it,
    // or it stopped fetching) may come back with less than it fetched before (a power cut): only
    // what it fetches from now on may bring it back in (KIP-903's check of the fetcher's broker
    // epoch, by the order of events: its old process is gone before the controller removes it).
    for (int32_t r : previous_isr) {
        if (r == _options.self || contains(_assignment.isr, r)) {
            continue;
        }
        if (auto* f = follower(r)) {
            f->log_end = model::offset(-1);
            f->leader_end_at_last_fetch = model::offset(-1);
        }
    }
}

follower_progress* partition::follower(int32_t replica) {
    for (auto& f : _followers) {
        if (f.replica == replica) {
            return &f;
        }
    }
    return nullptr;
}

std::vector<int32_t> partition::maximal_isr() const {
    std::vector<int32_t> out = _assignment.isr;
    if (_isr_in_flight) {
        for (int32_t r : _isr_in_flight->new_isr) {
            if (!contains(out, r)) {
                out.push_back(r);
            }
        }
    }
    return out;
}

result<uint64_t> partition::start_txn_verification(model::producer_id pid, model::sequence seq,
                                                   model::producer_epoch epoch) {
    if (_role != partition_role::leader) {
        return make_error_code(errc::not_leader_or_follower);
    }
    return _log->start_txn_verification(pid, seq, epoch);
}

result<storage::append_result> partition::append_as_leader(std::span<uint8_t> batches, int16_t acks,
                                                           int32_t min_insync,
                                                           storage::verification_guard guard) {
    if (_role != partition_role::leader) {
        return make_error_code(errc::not_leader_or_follower);
    }
    // Kafka's appendRecordsToLeader: checked against the ISR, not the maximal ISR, and against
    // min.insync.replicas capped at the replica count (effectiveMinIsr, Kafka 3.7+).
    if (acks == -1 && static_cast<int64_t>(_assignment.isr.size()) < capped_min_insync(min_insync)) {
        return make_error_code(errc::not_enough_replicas);
    }
    auto r = _log->append(batches, model::leader_epoch(_assignment.leader_epoch), guard);
    if (r && !r.value().duplicate) {
        if (_assignment.replicas.size() > 1 && _options.log_end_moved) {
            _options.log_end_moved();
        }
        maybe_advance_high_watermark();
    }
    return r;
}

result<storage::append_result> partition::append_txn_marker(model::producer_id pid,
                                                            model::producer_epoch epoch,
                                                            bool commit, int32_t coordinator_epoch,
                                                            int32_t min_insync) {
    namespace rf = protocol::records;
    rf::control_batch_options o;
    o.producer_id = pid.value();
    o.producer_epoch = epoch.value();
    o.coordinator_epoch = coordinator_epoch;
    o.timestamp = storage::wall_clock_now().value();
    std::vector<uint8_t> batch;
    if (auto ec = rf::build_control_batch(
            commit ? rf::control_type::commit : rf::control_type::abort, o, batch)) {
        return ec;
    }
    // The log rewrites the offset and epoch in place; this buffer is ours until it returns.
    return append_as_leader(batch, -1, min_insync);
}

std::error_code partition::on_follower_fetch(int32_t replica, model::offset fetch_offset,
                                             int32_t current_leader_epoch) {
    if (_role != partition_role::leader) {
        return errc::not_leader_or_follower;
    }
    if (current_leader_epoch >= 0 && current_leader_epoch < _assignment.leader_epoch) {
        return errc::fenced_leader_epoch;
    }
    if (current_leader_epoch > _assignment.leader_epoch) {
        return errc::unknown_leader_epoch;
    }
    auto* f = follower(replica);
    if (f == nullptr) {
        return errc::not_leader_or_follower;  // not a replica of this partition
    }
    const auto leo = _log->log_end_offset();
    if (fetch_offset > leo) {
        // Ahead of the leader: it must truncate first; the read answers OFFSET_OUT_OF_RANGE.
        return errc::offset_out_of_range;
    }
    const auto now = _options.clock();
    // Kafka's updateFetchState: caught up now if it asked for our log end offset; caught up at
    // its previous fetch if it now asks for what was our log end offset then.
    if (fetch_offset >= leo) {
        f->last_caught_up = now;
    } else if (f->leader_end_at_last_fetch.value() >= 0 &&
               fetch_offset >= f->leader_end_at_last_fetch) {
        f->last_caught_up = std::max(f->last_caught_up, f->last_fetch);
    }
    f->log_end = fetch_offset;
    f->last_fetch = now;
    f->leader_end_at_last_fetch = leo;
    maybe_expand_isr(*f);
    maybe_advance_high_watermark();
    return {};
}

std::optional<int32_t> partition::preferred_read_replica(
    model::offset offset, const std::vector<int32_t>& same_rack) const {
    if (_role != partition_role::leader) {
        return std::nullopt;
    }
    const auto& isr = _assignment.isr;
    std::optional<int32_t> best;
    model::offset best_end{-1};
    for (const auto& f : _followers) {
        bool wanted = std::find(same_rack.begin(), same_rack.end(), f.replica) != same_rack.end();
        bool in_sync = std::find(isr.begin(), isr.end(), f.replica) != isr.end();
        // Kafka's ReplicaView comparator: the furthest log end (a tie keeps the first found).
        if (wanted && in_sync && f.log_end >= offset && f.log_end > best_end) {
            best = f.replica;
            best_end = f.log_end;
        }
    }
    return best;
}

result<partition::read_outcome> partition::read(const read_request& r) {
    auto upper = _log->high_watermark();
    if (r.replica >= 0) {
        if (auto ec = on_follower_fetch(r.replica, r.offset, r.current_leader_epoch)) {
            return ec;
        }
        upper = _log->log_end_offset();
    } else if (auto ec = r.any_replica ? check_epoch(r.current_leader_epoch)
                                       : check_leader(r.current_leader_epoch)) {
        return ec;
    }
    read_outcome out;
    out.high_watermark = _log->high_watermark();
    out.last_stable_offset = _log->last_stable_offset();
    out.log_start = _log->log_start_offset();
    out.data.next_offset = r.offset;
    const bool committed_only = r.replica < 0 && r.read_committed;
    if (committed_only) {
        upper = out.last_stable_offset;
    }
    // Below the bound, past it, or no room left in the response: nothing to read. (A
    // read_committed fetch may sit between the LSO and the high watermark: Kafka answers it
    // empty, not out of range.)
    if (r.offset >= upper || (r.max_bytes == 0 && !r.min_one)) {
        if (r.offset > _log->log_end_offset() || r.offset < out.log_start) {
            return make_error_code(storage::errc::offset_out_of_range);
        }
        return out;
    }
    SPOOL_TRY(data, _log->read(r.offset, r.max_bytes, upper, r.min_one));
    out.data = std::move(data);
    if (committed_only && out.data.next_offset > r.offset) {
        SPOOL_TRY(aborted, _log->aborted_transactions(r.offset, out.data.next_offset));
        out.aborted = std::move(aborted);
    }
    return out;
}

void partition::update_config(const storage::log_config& cfg) {
    _log->update_config(cfg);
    // A lower min.insync.replicas may let the high watermark move at once.
    maybe_advance_high_watermark();
}

int32_t partition::capped_min_insync(int32_t min_insync) const {
    const auto replicas = static_cast<int32_t>(std::max<size_t>(_assignment.replicas.size(), 1));
    return std::clamp(min_insync, 1, replicas);
}

int32_t partition::effective_min_insync() const {
    return capped_min_insync(_log->config().min_insync_replicas);
}

void partition::maybe_advance_high_watermark() {
    if (_role != partition_role::leader) {
        return;
    }
    if (static_cast<int32_t>(_assignment.isr.size()) < effective_min_insync()) {
        // KIP-966: members that left the ISR below min.insync.replicas form the ELR and may be
        // elected; they hold everything below the high watermark only if it stands still now.
        return;
    }
    model::offset hw = _log->log_end_offset();
    for (int32_t r : maximal_isr()) {
        if (r == _options.self) {
            continue;
        }
        const auto* f = follower(r);
        if (f == nullptr || f->log_end.value() < 0) {
            return;  // an ISR member we have not heard from at this epoch holds it back
        }
        hw = std::min(hw, f->log_end);
    }
    if (hw > _log->high_watermark()) {
        move_high_watermark(hw);
    }
}

void partition::move_high_watermark(model::offset hw) {
    _log->set_high_watermark(hw);
    if (_options.high_watermark_moved) {
        _options.high_watermark_moved();
    }
    complete_waiters();
}

void partition::maybe_expand_isr(const follower_progress& f) {
    if (_isr_in_flight || _options.isr == nullptr || contains(_assignment.isr, f.replica) ||
        _options.clock() < _isr_retry_after) {
        return;
    }
    // Kafka's isFollowerInSync: caught up to the high watermark and into our epoch, so it holds
    // every committed record and no record of a previous leader's that we truncated away.
    if (f.log_end < _log->high_watermark() || f.log_end < _leader_epoch_start) {
        return;
    }
    auto isr = _assignment.isr;
    isr.push_back(f.replica);
    propose_isr(std::move(isr), true);
}

void partition::tick() {
    const auto now = _options.clock();
    expire_waiters(now);
    if (_role != partition_role::leader || _isr_in_flight || _options.isr == nullptr ||
        now < _isr_retry_after) {
        return;
    }
    const auto leo = _log->log_end_offset();
    std::vector<int32_t> keep;
    for (int32_t r : _assignment.isr) {
        const auto* f = r == _options.self ? nullptr : follower(r);
        // Kafka's isCaughtUp: at our log end offset, or caught up within the lag window.
        const bool in_sync = r == _options.self || f == nullptr || f->log_end == leo ||
                             now - f->last_caught_up <= _options.replica_lag_time_max;
        if (in_sync) {
            keep.push_back(r);
        }
    }
    if (keep.size() < _assignment.isr.size()) {
        propose_isr(std::move(keep), false);
    }
}

void partition::propose_isr(std::vector<int32_t> new_isr, bool expand) {
    isr_change change;
    change.tp = ntp();
    change.leader_epoch = _assignment.leader_epoch;
    change.partition_epoch = _assignment.partition_epoch;
    change.record_revision = _assignment.record_revision;
    change.new_isr = std::move(new_isr);
    _isr_in_flight = change;
    const int32_t epoch = change.leader_epoch;
    const int32_t pepoch = change.partition_epoch;
    log::get("replication")
        ->info("{}: proposing ISR {} -> {} members at epoch {}/{}", ntp().dir_name(),
               _assignment.isr.size(), change.new_isr.size(), change.leader_epoch,
               change.partition_epoch);
    // Done may run inline (a writer that answers at once): everything above is already set.
    _options.isr->write(std::move(change),
                        [this, alive = _alive, expand, epoch, pepoch](std::error_code ec) {
                            if (!*alive) {
                                return;
                            }
                            on_isr_written(epoch, pepoch, expand, ec);
                        });
}

void partition::on_isr_written(int32_t leader_epoch, int32_t partition_epoch, bool expand,
                               std::error_code ec) {
    const bool still_ours = _isr_in_flight && _isr_in_flight->leader_epoch == leader_epoch &&
                            _isr_in_flight->partition_epoch == partition_epoch;
    if (ec) {
        log::get("replication")
            ->warn("{}: ISR change not written: {}", ntp().dir_name(), ec.message());
        if (still_ours) {
            _isr_in_flight.reset();  // proposed again after the backoff if still needed
            _isr_retry_after = _options.clock() + _options.isr_retry_backoff;
        }
        return;
    }
    ++(expand ? _isr_expands : _isr_shrinks);
    // The change stays in flight until apply() shows it (a newer partition epoch).
}

bool partition::under_replicated() const {
    return _assignment.isr.size() < _assignment.replicas.size();
}

bool partition::under_min_isr(int32_t min_insync) const {
    return static_cast<int64_t>(_assignment.isr.size()) < capped_min_insync(min_insync);
}

}  // namespace spool::broker::replication
