#pragma once

// How a transaction coordinator gets its commit/abort markers written: a WriteTxnMarkers request
// to the leader of every partition of the transaction (Kafka's TransactionMarkerChannelManager).
// The coordinator hands over one transaction's markers and waits for `done`; the sender retries
// each partition with backoff until its leader has written the marker (or answers that the
// partition no longer exists), and only then calls done(ok). It calls done with an error only
// when it gives up for good (stopped, or the coordinator moved: `still_ours` turned false);
// the transaction then stays in its Prepare state and the next coordinator sends again.
//
// Threading: send() is called on the coordinator's shard, and done must run on that shard too.

#include "broker/txn/txn_metadata.h"

#include <functional>
#include <string>
#include <system_error>
#include <vector>

namespace spool::broker::txn {

struct marker_request {
    std::string transactional_id;  // for logs
    int64_t producer_id = no_producer_id;
    int16_t producer_epoch = no_producer_epoch;
    bool commit = false;
    int32_t coordinator_epoch = 0;  // the __transaction_state partition's leader epoch
    std::vector<txn_partition> partitions;
};

class marker_sender {
public:
    virtual ~marker_sender() = default;
    virtual void send(marker_request request, std::function<bool()> still_ours,
                      std::function<void(std::error_code)> done) = 0;
};

}  // namespace spool::broker::txn
