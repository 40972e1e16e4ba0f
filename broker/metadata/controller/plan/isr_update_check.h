#pragma once

// The validation both stores apply to a leader's ISR change (store::alter_isr) before writing it,
// as KRaft's controller does for AlterPartition: the change is checked against the partition's
// record as the store's snapshot holds it at the revision the leader read.
//
//   - the record must still be the one the leader read: same record revision, leader epoch and
//     partition epoch, else errc::stale_partition (retry from a newer snapshot);
//   - the caller must lead the partition, and the new ISR must be non-empty, name each replica
//     at most once, only replicas, and include the leader, else errc::invalid_isr;
//   - a replica joining the ISR must be eligible (live and not in controlled shutdown, KIP-841),
//     else errc::ineligible_replica: a broker on its way out must not become a replica acks=all
//     waits for, nor one the controller may elect.
// The result is the record to write: the new ISR, partition_epoch + 1, everything else kept.
// The etcd store then writes it only if etcd still holds the record at that revision (which
// covers both epochs) and the joining brokers are still registered and not shutting down.
//
// Pure; no threading concerns.

#include "broker/metadata/cluster_state.h"
#include "broker/metadata/store.h"
#include "common/result.h"

#include <cstdint>
#include <vector>

namespace spool::broker::metadata {

struct checked_isr_update {
    partition_state next;          // the record to write (record_revision: the one read)
    std::vector<int32_t> joining;  // members of the new ISR not in the current one
    bool unchanged = false;        // the new ISR is the current one: nothing to write
};

result<checked_isr_update> check_isr_update(const cluster_state& state, int32_t leader,
                                            const isr_update& u);

}  // namespace spool::broker::metadata
