// The etcd store's replication calls (etcd_store.h): alter_isr, the leader's ISR change as a
// compare-and-swap on the partition record, shut_down_gracefully, the controlled shutdown, and
// end_session_of, a dead broker's session ended by the others.

#include "broker/metadata/controller/plan/controlled_shutdown.h"
#include "broker/metadata/controller/plan/isr_update_check.h"
#include "broker/metadata/errc.h"
#include "broker/metadata/etcd/etcd_store.h"
#include "common/log.h"

#include <algorithm>

namespace spool::broker::metadata {

namespace asio = boost::asio;

namespace {

std::shared_ptr<spdlog::logger> logger() {
    static auto l = log::get("metadata");
    return l;
}

// version(key) > 0: the key exists.
etcd::compare exists(std::string key) {
    return {std::move(key), etcd::compare::target::version, etcd::compare::op::greater, 0, {}, {}};
}

// This broker's registration is the one under `lease`: a broker whose session etcd expired (and
// that may not have noticed yet) writes nothing.
etcd::compare registered_under(const etcd_layout::keys& keys, int32_t node, int64_t lease) {
    return {
        keys.broker(node), etcd::compare::target::lease, etcd::compare::op::equal, lease, {}, {}};
}

}  // namespace

// ---- alter_isr ----

asio::awaitable<etcd_store::committed<partition_state>> etcd_store::alter_isr_here(etcd_store* self,
                                                                                   isr_update u) {
    using out = committed<partition_state>;
    auto deadline = clock::now() + self->_options.change_timeout;
    const int64_t lease = self->lease_id();
    if (!self->_session || lease == 0 || !self->_session->unfenced()) {
        co_return out{errc::stale_partition, nullptr};  // not registered, or fenced
    }
    const int32_t me = self->_session->self().node_id;
    // Checked against the record at u.record_revision as this snapshot holds it; the txn's
    // mod_revision compare then proves etcd still holds exactly that record, epochs included.
    auto checked = check_isr_update(*self->_published, me, u);
    if (!checked) {
        co_return out{checked.error(), nullptr};
    }
    if (checked.value().unchanged) {
        co_return out{checked.value().next, nullptr};
    }
    auto next = std::move(checked.value().next);
    const auto key = self->_keys.partition(u.topic, u.partition);
    etcd::txn_request t;
    t.compares.push_back(etcd::compare::modified_at(key, u.record_revision));
    t.compares.push_back(registered_under(self->_keys, me, lease));
    for (int32_t r : checked.value().joining) {
        // Still the registration the check found eligible (KIP-903: the same incarnation,
        // unfenced), and not (since the snapshot) in controlled shutdown.
        auto b = self->_published->brokers.find(r);
        t.compares.push_back(
            b != self->_published->brokers.end() && b->second.record_revision > 0
                ? etcd::compare::modified_at(self->_keys.broker(r), b->second.record_revision)
                : exists(self->_keys.broker(r)));
        t.compares.push_back(etcd::compare::absent(self->_keys.shutdown(r)));
    }
    t.success.emplace_back(etcd::put_op{key, etcd_layout::encode(to_record(next)), 0});
    auto done_op = self->_client->txn(std::move(t));
    auto done = co_await std::move(done_op);
    if (!done) {
        co_return out{self->failed(done.error()), nullptr};
    }
    self->note_reachable();
    if (!done.value().succeeded) {
        logger()->debug("ISR change of {}-{} refused: the record or a registration changed",
                        u.topic, u.partition);
        co_return out{errc::stale_partition, nullptr};
    }
    next.record_revision = done.value().revision;
    auto visible = self->visible_at(done.value().revision, deadline);
    auto seen = co_await std::move(visible);
    // Committed either way: a lagging watch delays only when the shards see it.
    co_return out{std::move(next), seen.visible};
}

store::op<partition_state> etcd_store::alter_isr(isr_update u) {
    auto op = finish(alter_isr_here(this, std::move(u)));
    co_return co_await std::move(op);
}

// ---- controlled shutdown ----

asio::awaitable<result<int64_t>> etcd_store::mark_shutting_down(int64_t lease) {
    const auto& me = _session->self();
    etcd::txn_request t;
    t.compares.push_back(registered_under(_keys, me.node_id, lease));
    // Under the session's lease: a broker that dies while shutting down takes its mark along.
    t.success.emplace_back(
        etcd::put_op{_keys.shutdown(me.node_id),
                     etcd_layout::encode(etcd_layout::shutdown_record{me.incarnation_id}), lease});
    auto done_op = _client->txn(std::move(t));
    auto done = co_await std::move(done_op);
    if (!done) {
        co_return failed(done.error());
    }
    note_reachable();
    // A failed compare: the session was just registered again under another lease; the caller
    // marks again under that one.
    co_return done.value().succeeded ? done.value().revision : 0;
}

asio::awaitable<bool> etcd_store::shut_down_here(etcd_store* self,
                                                 std::chrono::milliseconds timeout) {
    const auto deadline = clock::now() + timeout;
    if (!self->_session) {
        co_return true;  // never registered: the cluster has nothing of ours to move
    }
    const int32_t me = self->_session->self().node_id;
    const auto started = clock::now();
    logger()->info("controlled shutdown: broker {} asks the controller to move {} partition(s)", me,
                   partitions_to_hand_over(*self->_published, me));
    while (!self->_stopping && clock::now() < deadline) {
        const int64_t lease = self->lease_id();
        int64_t marked_at = 0;
        if (lease != 0) {
            auto mark = self->mark_shutting_down(lease);
            auto marked = co_await std::move(mark);
            if (marked) {
                marked_at = marked.value();
            }
        }
        if (marked_at == 0) {
            // etcd unreachable, or the session is between leases: try again shortly.
            auto retry_at = std::min(deadline, clock::now() + std::chrono::milliseconds(250));
            predicate never = [](const cluster_state&) { return false; };
            auto pause = self->wait_until(std::move(never), retry_at);
            co_await std::move(pause);
            continue;
        }
        // Settled once a snapshot that shows the mark shows nothing left to move; a new lease
        // (the mark went with the old one) marks again.
        predicate settled = [self, me, lease, marked_at](const cluster_state& s) {
            return self->lease_id() != lease ||
                   (s.version >= marked_at && partitions_to_hand_over(s, me) == 0);
        };
        auto wait = self->wait_until(std::move(settled), deadline);
        auto seen = co_await std::move(wait);
        if (seen && self->lease_id() == lease) {
            logger()->info(
                "controlled shutdown: broker {} handed over its partitions in {} ms", me,
                std::chrono::duration_cast<std::chrono::milliseconds>(clock::now() - started)
                    .count());
            co_return true;
        }
    }
    logger()->warn(
        "controlled shutdown: broker {} still leads or holds {} partition(s) another in-sync "
        "replica could take after {} ms; stopping anyway",
        me, partitions_to_hand_over(*self->_published, me), timeout.count());
    co_return false;
}

asio::awaitable<bool> etcd_store::shut_down_gracefully(std::chrono::milliseconds timeout) {
    if (_stopped) {
        co_return false;
    }
    auto op = run_here(shut_down_here(this, timeout));
    co_return co_await std::move(op);
}

asio::awaitable<result<void>> etcd_store::end_session_here(etcd_store* self, int32_t node,
                                                            int64_t lease) {
    if (self->_session && node == self->_session->self().node_id) {
        co_return std::make_error_code(std::errc::invalid_argument);  // our own: stop() ends it
    }
    // Only the registration the caller judged: a node that registered again since holds
    // another lease, and its new process is not the one found dead.
    const auto s = self->snapshot();
    const auto it = s->brokers.find(node);
    if (lease == 0 || it == s->brokers.end() || it->second.lease != lease) {
        co_return success();
    }
    // Lease ids are never reused, so revoking this one can only end that incarnation's session:
    // etcd deletes every key under it (the registration, a controller key, a shutdown mark) in
    // one revision, and the watch brings the change to every broker's controller.
    auto revoke_op = self->client().revoke_lease(lease);
    auto revoked = co_await std::move(revoke_op);
    if (!revoked && revoked.error() != etcd::errc::lease_not_found) {
        co_return revoked.error();
    }
    co_return success();
}

store::op<void> etcd_store::end_session_of(int32_t node, int64_t lease) {
    if (_stopped) {
        co_return errc::unavailable;
    }
    auto ended_op = run_here(end_session_here(this, node, lease));
    co_return co_await std::move(ended_op);
}

}  // namespace spool::broker::metadata
