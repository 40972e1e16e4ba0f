#pragma once

// How the controller's partition writes become etcd transactions: every txn first compares
// created_at(P/controller, epoch), so a deposed controller (whose key was deleted, or re-created
// by its successor with a later create_revision) can never commit; then each record's own
// revision (modified_at, or absent for a placement) and, for placements, the topic record's
// revision, so nothing is written over a change this controller has not seen yet, and no
// partition of a deleted topic is ever re-created. On failure the txn reads P/controller back,
// telling a deposition from a stale snapshot in the same round trip.
// etcd refuses a txn with more than --max-txn-ops (128 by default) compares or ops per branch:
// batches stay within max_ops of each.
//
// Pure; no threading concerns.

#include "broker/etcd/client.h"
#include "broker/metadata/controller/plan/controller_plan.h"
#include "broker/metadata/etcd/etcd_layout.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace spool::broker::metadata {

struct controller_txn {
    etcd::txn_request request;
    size_t first = 0;  // the writes this txn carries: [first, first + count) of the plan
    size_t count = 0;
    int32_t unfences = -1;  // >= 0: this txn unfences that broker (no partition writes)
};

inline constexpr size_t max_txn_ops = 100;

std::vector<controller_txn> controller_txns(const etcd_layout::keys& keys, int64_t epoch,
                                            const std::vector<partition_write>& writes,
                                            size_t max_ops = max_txn_ops);

// Unfencing (controller_plan.h rule 5): the registration rewritten with fenced false under its
// own lease, only while the controller key is ours and the registration is still the one the
// plan read (a broker that registered again meanwhile is judged again from the next snapshot).
controller_txn unfence_txn(const etcd_layout::keys& keys, int64_t epoch,
                           const broker_registration& b);

// The campaign: absent(P/controller) -> put our record under the session lease; else read the
// holder back.
etcd::txn_request campaign_txn(const etcd_layout::keys& keys,
                               const etcd_layout::controller_record& me, int64_t lease);
// Resignation: delete P/controller only while it is still the key this controller created.
etcd::txn_request resign_txn(const etcd_layout::keys& keys, int64_t epoch);

// ElectLeaders requests the plan handled (plan_result::elections_done, controller_elections.h):
// txns deleting them, each comparing the controller's epoch and carrying at most max_ops
// deletions; count 0 (they write no partition record).
std::vector<controller_txn> election_cleanup_txns(const etcd_layout::keys& keys, int64_t epoch,
                                                  const std::vector<std::string>& ids,
                                                  size_t max_ops = max_txn_ops);

}  // namespace spool::broker::metadata
