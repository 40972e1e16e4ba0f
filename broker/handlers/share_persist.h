#pragma once

// The persister on a data partition's leader (Kafka's SharePartition with its Persister): keeps
// each share group's state of a partition led here (the partition's door, share_partition.h)
// and the share coordinator's copy (share_state_client.h) in step.
//
//   share_ensure_state   the group's first touch of the partition here: its state is read back
//                        from the share coordinator (ReadShareGroupState, which also fences the
//                        previous leader) and restored; without one the group starts at
//                        share.auto.offset.reset (create) and that start is written at once
//   share_persist        writes the state's changes (finishes, releases, lock expiries, a moved
//                        start offset) and returns once they are durable: before an
//                        acknowledgement is answered. One write per group and partition at a
//                        time; a change made while one is in flight waits for it and then goes
//                        in the next write, which carries everything (the whole state each time).
//                        A write that fails rolls back the acknowledgements it carried before
//                        another write can start, and each of their callers gets its error
//   share_reinitialize   AlterShareGroupOffsets: a new start offset under a new state epoch
//   share_forget         DeleteShareGroupOffsets / DeleteGroups: the state is forgotten here and
//                        written uninitialized (start offset -1, a new state epoch) at the
//                        coordinator
//
// Each runs on the partition's owner shard (it hops there and back); the door is only touched
// there, between suspensions. Errors are Kafka's: NOT_LEADER_OR_FOLLOWER when the partition is
// not led here, else the persister's (share_state_client.h).
//
// Threading: from any shard's coroutine; resumes there.

#include "broker/handlers/share_state_access.h"
#include "protocol/errors.h"

#include <boost/asio/awaitable.hpp>

#include <string>

namespace spool::broker::handlers {

struct services;

boost::asio::awaitable<protocol::error_code> share_ensure_state(services& svc,
                                                                share_state_key key,
                                                                std::string group, bool create);
// `target`: the version share_acknowledge returned (its outcome: durable, or the write's error
// with the acknowledgement rolled back); 0: the state as it is when called.
boost::asio::awaitable<protocol::error_code> share_persist(services& svc, share_state_key key,
                                                           std::string group,
                                                           uint64_t target = 0);
boost::asio::awaitable<protocol::error_code> share_reinitialize(services& svc,
                                                                share_state_key key,
                                                                std::string group,
                                                                int64_t start_offset);
boost::asio::awaitable<protocol::error_code> share_forget(services& svc, share_state_key key,
                                                          std::string group);

}  // namespace spool::broker::handlers
