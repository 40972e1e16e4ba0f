// The etcd store's reassignment calls (etcd_store.h): alter_reassignment, the request's target
// written into the partition record, and the decommission of a broker (decommission.h), all as
// compare-and-swap transactions on the partition records' revisions, retried from a newer
// snapshot when another writer (the controller, a leader's ISR change) got there first.

#include "broker/metadata/controller/plan/decommission.h"
#include "broker/metadata/errc.h"
#include "broker/metadata/etcd/etcd_store.h"
#include "common/log.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace spool::broker::metadata {

namespace asio = boost::asio;

namespace {

std::shared_ptr<spdlog::logger> logger() {
    static auto l = log::get("metadata");
    return l;
}

result<void> as_void(const result<std::monostate>& r) {
    if (!r) {
        return r.error();
    }
    return success();
}

// Partition writes per txn, leaving room for the decommission mark and the compares.
constexpr size_t partitions_per_txn = 90;

}  // namespace

asio::awaitable<result<etcd_store::batch_written>> etcd_store::write_batch(
    etcd::txn_request t, int64_t seen_version, clock::time_point deadline) {
    auto done_op = _client->txn(std::move(t));
    auto done = co_await std::move(done_op);
    if (!done) {
        co_return failed(done.error());
    }
    note_reachable();
    batch_written out;
    // Committed: plan on from the snapshot that shows it. Lost a compare: from a newer one (the
    // change that failed it is on its way through the watch).
    int64_t wait_for = seen_version + 1;
    if (done.value().succeeded) {
        out.revision = done.value().revision;
        wait_for = out.revision;
    }
    predicate seen = [wait_for](const cluster_state& s) { return s.version >= wait_for; };
    auto wait = wait_until(std::move(seen), deadline);
    out.next = co_await std::move(wait);
    co_return out;
}

// ---- AlterPartitionReassignments ----

asio::awaitable<result<int64_t>> etcd_store::alter_reassignment_here(etcd_store* self,
                                                                     reassignment_request r) {
    const auto deadline = clock::now() + self->_options.change_timeout;
    auto snapshot = self->_published;
    while (!self->_stopping && snapshot) {
        auto change = apply_reassignment_request(*snapshot, r);
        if (!change) {
            co_return change.error();
        }
        if (change.value().unchanged) {
            co_return int64_t{0};
        }
        const auto& next = change.value().next;
        const auto key = self->_keys.partition(r.topic, r.partition);
        etcd::txn_request t;
        t.compares.push_back(etcd::compare::modified_at(key, next.record_revision));
        t.success.emplace_back(etcd::put_op{key, etcd_layout::encode(to_record(next)), 0});
        auto write = self->write_batch(std::move(t), snapshot->version, deadline);
        auto written = co_await std::move(write);
        if (!written) {
            co_return written.error();
        }
        if (written.value().revision != 0) {
            logger()->info("{}-{}: reassignment {}", r.topic, r.partition,
                           r.target ? fmt::format("to {} asked", fmt::join(*r.target, ","))
                                    : std::string("cancelled"));
            co_return written.value().revision;
        }
        // The record changed since this snapshot: judge the request again against the next.
        snapshot = std::move(written.value().next);
    }
    co_return errc::timed_out;
}

store::op<void> etcd_store::alter_reassignment(reassignment_request r) {
    auto op = finish(lift(alter_reassignment_here(this, std::move(r)), this));
    auto done = co_await std::move(op);
    co_return as_void(done);
}

// ---- decommission ----

asio::awaitable<result<int64_t>> etcd_store::start_decommission_here(etcd_store* self,
                                                                     int32_t broker) {
    const auto deadline = clock::now() + self->_options.change_timeout;
    auto snapshot = self->_published;
    int64_t last = 0;
    while (!self->_stopping && snapshot) {
        const auto& s = *snapshot;
        auto mark = s.decommissioning.find(broker);
        if (!s.is_live(broker) && mark == s.decommissioning.end()) {
            co_return errc::unknown_broker;
        }
        auto planned = plan_decommission(s, broker);
        if (!planned.stuck.empty()) {
            logger()->warn(
                "decommission of broker {} refused: {} partition(s) have no other broker to "
                "move to (e.g. {}-{})",
                broker, planned.stuck.size(), planned.stuck.front().first,
                planned.stuck.front().second);
            co_return errc::invalid_replica_assignment;
        }
        // The mark lists every partition this decommission reassigned, the earlier ones too.
        etcd_layout::decommission_record rec;
        std::set<std::pair<std::string, int32_t>> listed;
        if (mark != s.decommissioning.end()) {
            for (const auto& tp : mark->second) {
                if (listed.insert(tp).second) {
                    rec.partitions.push_back(tp);
                }
            }
        }
        const size_t batch = std::min(planned.moves.size(), partitions_per_txn);
        etcd::txn_request t;
        for (size_t i = 0; i < batch; ++i) {
            const auto& m = planned.moves[i];
            const auto& p = s.find(m.topic)->partitions[static_cast<size_t>(m.partition)];
            partition_state next = p;
            next.target_replicas = m.target;
            const auto key = self->_keys.partition(m.topic, m.partition);
            t.compares.push_back(etcd::compare::modified_at(key, p.record_revision));
            t.success.emplace_back(etcd::put_op{key, etcd_layout::encode(to_record(next)), 0});
            if (listed.emplace(m.topic, m.partition).second) {
                rec.partitions.emplace_back(m.topic, m.partition);
            }
        }
        if (mark == s.decommissioning.end() || batch > 0) {
            t.success.emplace_back(
                etcd::put_op{self->_keys.decommission(broker), etcd_layout::encode(rec), 0});
        } else {
            co_return last;  // marked, and nothing (left) to move
        }
        auto write = self->write_batch(std::move(t), s.version, deadline);
        auto written = co_await std::move(write);
        if (!written) {
            co_return written.error();
        }
        if (written.value().revision != 0) {
            last = written.value().revision;
            logger()->info("decommission of broker {}: {} partition(s) asked to move", broker,
                           batch);
            if (batch == planned.moves.size()) {
                co_return last;
            }
        }
        snapshot = std::move(written.value().next);
    }
    co_return errc::timed_out;
}

store::op<void> etcd_store::start_decommission(int32_t broker) {
    auto op = finish(lift(start_decommission_here(this, broker), this));
    auto done = co_await std::move(op);
    co_return as_void(done);
}

asio::awaitable<result<int64_t>> etcd_store::cancel_decommission_here(etcd_store* self,
                                                                      int32_t broker) {
    const auto deadline = clock::now() + self->_options.change_timeout;
    auto snapshot = self->_published;
    while (!self->_stopping && snapshot) {
        const auto& s = *snapshot;
        auto mark = s.decommissioning.find(broker);
        if (mark == s.decommissioning.end()) {
            co_return errc::unknown_broker;
        }
        // Its reassignments still asked for: their targets are cleared, the controller reverts.
        etcd::txn_request t;
        size_t cancelled = 0;
        for (const auto& [topic, partition] : mark->second) {
            const auto* tm = s.find(topic);
            if (tm == nullptr || !tm->has_partition(partition)) {
                continue;
            }
            const auto& p = tm->partitions[static_cast<size_t>(partition)];
            const auto& target = p.target_replicas;
            if (target.empty() || std::find(target.begin(), target.end(), broker) != target.end()) {
                continue;  // done, cancelled already, or no longer this decommission's move
            }
            if (cancelled == partitions_per_txn) {
                break;
            }
            partition_state next = p;
            next.target_replicas.clear();
            const auto key = self->_keys.partition(topic, partition);
            t.compares.push_back(etcd::compare::modified_at(key, p.record_revision));
            t.success.emplace_back(etcd::put_op{key, etcd_layout::encode(to_record(next)), 0});
            ++cancelled;
        }
        const bool last_batch = cancelled < partitions_per_txn;
        if (last_batch) {
            // The mark needs no compare of its own: only decommission calls edit it.
            t.success.emplace_back(etcd::delete_op{self->_keys.decommission(broker), {}});
        }
        auto write = self->write_batch(std::move(t), s.version, deadline);
        auto written = co_await std::move(write);
        if (!written) {
            co_return written.error();
        }
        if (written.value().revision != 0) {
            logger()->info("decommission of broker {}: {} reassignment(s) cancelled{}", broker,
                           cancelled, last_batch ? ", mark cleared" : "");
            if (last_batch) {
                co_return written.value().revision;
            }
        }
        snapshot = std::move(written.value().next);
    }
    co_return errc::timed_out;
}

store::op<void> etcd_store::cancel_decommission(int32_t broker) {
    auto op = finish(lift(cancel_decommission_here(this, broker), this));
    auto done = co_await std::move(op);
    co_return as_void(done);
}

}  // namespace spool::broker::metadata
