#pragma once

// Moving a member's current assignment towards its target (Kafka's CurrentAssignmentBuilder):
// partitions leave before new ones arrive, and a partition is handed to its new member only once
// its previous owner gave it up.
//
//   Stable/at an older epoch --target differs--> revoke first: UnrevokedPartitions (epoch kept)
//                                                 nothing to revoke, some partitions still owned
//                                                 elsewhere: UnreleasedPartitions (new epoch)
//                                                 everything free: Stable (new epoch)
//   UnrevokedPartitions --the member reports it no longer owns them--> as above
//   UnreleasedPartitions --partitions freed--> picks them up; Stable once it has all.

#include "broker/coordinator/consumer_group.h"

#include <functional>
#include <optional>

namespace spool::broker::coordinator {

// Whether another member than the one reconciling holds (assigned or pending revocation) tp.
using held_elsewhere_fn = std::function<bool(const protocol::uuid&, int32_t)>;

// One reconciliation step of `m` towards `target` at `target_epoch`. owned: the partitions the
// member reported in this heartbeat (nullopt: not reported). Updates m's epoch, state, assigned
// and pending_revocation.
void reconcile(consumer_member& m, int32_t target_epoch, const assignment_map& target,
               const std::optional<assignment_map>& owned, const held_elsewhere_fn& held);

}  // namespace spool::broker::coordinator
