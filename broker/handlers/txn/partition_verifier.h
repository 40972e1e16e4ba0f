#pragma once

// KIP-890 part 1 from the partition leader's side (Kafka's AddPartitionsToTxnManager): asks the
// transaction coordinator of a transactional id whether partitions are in the producer's ongoing
// transaction (AddPartitionsToTxn v4 with verifyOnly). The produce path calls the interface; the
// coordinator_verifier below serves it from this broker's own coordinator when it leads the
// id's __transaction_state partition, and otherwise over the inter-broker listener.
//
// The outcome per partition is what Kafka's AddPartitionsToTxnManager hands ReplicaManager: NONE,
// INVALID_TXN_STATE (not in the transaction; also a coordinator that refused us
// CLUSTER_AUTHORIZATION_FAILED, and TRANSACTION_ABORTABLE for clients that predate it),
// INVALID_PRODUCER_EPOCH (PRODUCER_FENCED), INVALID_PRODUCER_ID_MAPPING, CONCURRENT_TRANSACTIONS,
// NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE (no live coordinator), NETWORK_EXCEPTION (it did not
// answer). Produce turns the retriable ones into NOT_ENOUGH_REPLICAS (produce.cc).
//
// KIP-890 part 2 (transaction.version 2, Produce v12+ and TxnOffsetCommit v5+): with `add` the
// coordinator adds the partitions to the transaction instead (AddPartitionsToTxn v5 without
// verifyOnly, Kafka's transactionSupportedOperation addPartition), starting it if none is open.
//
// Not batched across producers: Kafka's manager merges the verifications of all producers bound
// for one coordinator node into one request per round trip; here each produce request sends its
// own (one transaction, all its partitions), over a connection opened for it.
//
// Threading: verify() from any shard coroutine; it resumes there.

#include "broker/metadata/store.h"
#include "broker/model/ids.h"
#include "broker/replication/leader_client.h"
#include "protocol/errors.h"

#include <boost/asio/awaitable.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace spool::broker::txn {
class txn_service;
}  // namespace spool::broker::txn

namespace spool::broker::handlers {

struct verify_request {
    std::string transactional_id;
    int64_t producer_id = -1;
    int16_t producer_epoch = -1;
    std::vector<std::pair<std::string, int32_t>> partitions;
    bool add = false;  // add them (TV2) rather than verify them
};

using verify_outcome = std::map<std::pair<std::string, int32_t>, protocol::error_code>;

class partition_verifier {
public:
    virtual ~partition_verifier() = default;
    // req must outlive the call (the caller's local across its co_await).
    virtual boost::asio::awaitable<verify_outcome> verify(const verify_request& req) = 0;
};

class coordinator_verifier final : public partition_verifier {
public:
    // coordinators may be nullptr (transactions not wired): every partition then answers
    // COORDINATOR_NOT_AVAILABLE. listener: inter.broker.listener.name.
    coordinator_verifier(const metadata::store& store, broker::txn::txn_service* coordinators,
                         int32_t node_id, replication::leader_client_options options,
                         std::string listener);
    boost::asio::awaitable<verify_outcome> verify(const verify_request& req) override;

private:
    boost::asio::awaitable<verify_outcome> local(const verify_request& req);
    boost::asio::awaitable<verify_outcome> remote(const verify_request& req, int32_t node);

    const metadata::store& _store;
    broker::txn::txn_service* _coordinators;
    int32_t _node_id;
    replication::leader_client_options _options;
    std::string _listener;
};

}  // namespace spool::broker::handlers
