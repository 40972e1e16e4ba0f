#include "broker/handlers/txn/partition_verifier.h"

#include "broker/cluster/leader_endpoints.h"
#include "broker/handlers/txn/txn_errors.h"
#include "broker/txn/txn_service.h"
#include "common/log.h"
#include "protocol/messages/add_partitions_to_txn.h"

#include <boost/asio/this_coro.hpp>

#include <memory>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;

constexpr int16_t verify_version = 4;
constexpr int16_t add_version = 5;  // Kafka's AddPartitionsToTxnManager for addPartition
constexpr std::chrono::milliseconds call_timeout{30000};

verify_outcome every(const verify_request& req, error_code e) {
    verify_outcome out;
    for (const auto& p : req.partitions) {
        out[p] = e;
    }
    return out;
}

// Kafka's AddPartitionsToTxnManager.onComplete, per partition: PRODUCER_FENCED becomes
// INVALID_PRODUCER_EPOCH (the producer's produce answer) and TRANSACTION_ABORTABLE becomes
// INVALID_TXN_STATE for produce requests that predate it (below v11, Kafka's defaultError).
error_code as_manager(error_code e) {
    switch (e) {
        case error_code::producer_fenced:
            return error_code::invalid_producer_epoch;
        case error_code::transaction_abortable:
            return error_code::invalid_txn_state;
        default:
            return e;
    }
}

}  // namespace

coordinator_verifier::coordinator_verifier(const metadata::store& store,
                                           broker::txn::txn_service* coordinators, int32_t node_id,
                                           replication::leader_client_options options,
                                           std::string listener)
    : _store(store),
      _coordinators(coordinators),
      _node_id(node_id),
      _options(std::move(options)),
      _listener(std::move(listener)) {}

boost::asio::awaitable<verify_outcome> coordinator_verifier::verify(const verify_request& req) {
    if (_coordinators == nullptr || !_coordinators->started()) {
        co_return every(req, error_code::coordinator_not_available);
    }
    // Kafka's getTransactionCoordinator: the live leader of the id's state partition.
    auto snap = _store.snapshot();
    const auto* topic = snap->find(broker::txn::transaction_state_topic);
    const int32_t partition = _coordinators->partition_for(req.transactional_id);
    const int32_t leader = topic != nullptr && topic->has_partition(partition)
                               ? topic->partitions[static_cast<size_t>(partition)].leader
                               : -1;
    if (leader < 0) {
        co_return every(req, error_code::coordinator_not_available);
    }
    if (leader == _node_id) {
        co_return co_await local(req);
    }
    co_return co_await remote(req, leader);
}

boost::asio::awaitable<verify_outcome> coordinator_verifier::local(const verify_request& req) {
    auto ref = std::make_shared<broker::txn::txn_ref>(
        broker::txn::txn_ref{req.transactional_id, req.producer_id, req.producer_epoch});
    auto parts = std::make_shared<std::vector<broker::txn::txn_partition>>();
    for (const auto& [topic, index] : req.partitions) {
        parts->push_back({topic, index});
    }
    if (req.add) {
        // Only shared_ptrs in the lambda, and a named std::function (GCC 12).
        broker::txn::txn_service::call_fn<std::error_code> add =
            [ref, parts](broker::txn::txn_coordinator* c,
                         std::function<void(std::error_code)> done) {
                if (!c) {
                    return done(make_error_code(broker::txn::errc::not_coordinator));
                }
                c->add_partitions(*ref, *parts, std::move(done),
                                  broker::txn::txn_version_epoch_bump);
            };
        auto ec = co_await _coordinators->call<std::error_code>(req.transactional_id,
                                                                std::move(add));
        // As the v5 handler answers it (add_partitions_to_txn.cc), then as the manager reads it.
        co_return every(req, as_manager(txn::txn_error(ec, add_version, 2)));
    }
    // Only shared_ptrs in the lambda, and a named std::function (GCC 12, init_producer_id.cc).
    broker::txn::txn_service::call_fn<broker::txn::txn_coordinator::verify_result> fn =
        [ref, parts](broker::txn::txn_coordinator* c,
                     std::function<void(broker::txn::txn_coordinator::verify_result)> done) {
            if (!c) {
                return done({make_error_code(broker::txn::errc::not_coordinator), {}});
            }
            done(c->verify_partitions(*ref, *parts));
        };
    auto verified = co_await _coordinators->call<broker::txn::txn_coordinator::verify_result>(
        req.transactional_id, std::move(fn));
    // As the v4 handler answers it (add_partitions_to_txn.cc), then as the manager reads it.
    if (verified.first) {
        co_return every(req, as_manager(txn::txn_error(verified.first, verify_version, 2)));
    }
    verify_outcome out;
    for (const auto& p : req.partitions) {
        out[p] = as_manager(txn::txn_error(verified.second[{p.first, p.second}], verify_version, 2));
    }
    co_return out;
}

boost::asio::awaitable<verify_outcome> coordinator_verifier::remote(const verify_request& req,
                                                                    int32_t node) {
    auto snap = _store.snapshot();
    auto b = snap->brokers.find(node);
    auto where = b == snap->brokers.end() ? std::nullopt
                                          : cluster::inter_broker_endpoint(b->second, _listener);
    if (!where) {
        co_return every(req, error_code::coordinator_not_available);
    }
    protocol::add_partitions_to_txn_request body;
    auto& t = body.transactions.emplace_back();
    t.transactional_id = req.transactional_id;
    t.producer_id = req.producer_id;
    t.producer_epoch = req.producer_epoch;
    t.verify_only = !req.add;
    const int16_t version = req.add ? add_version : verify_version;
    std::map<std::string, std::vector<int32_t>> by_topic;
    for (const auto& [topic, index] : req.partitions) {
        by_topic[topic].push_back(index);
    }
    for (auto& [name, ids] : by_topic) {
        auto& bt = t.topics.emplace_back();
        bt.name = name;
        bt.partitions = std::move(ids);
    }
    auto ex = co_await boost::asio::this_coro::executor;
    replication::leader_client client(ex, _options);
    if (auto ec = co_await client.connect(*where)) {
        log::get("txn")->debug("verification of '{}': coordinator {} unreachable: {}",
                               req.transactional_id, node, ec.message());
        co_return every(req, error_code::network_exception);
    }
    if (!client.supports(protocol::api_key::add_partitions_to_txn, version)) {
        client.close();
        co_return every(req, error_code::network_exception);
    }
    auto resp = co_await client.call<protocol::add_partitions_to_txn_response>(
        body, version, call_timeout);
    client.close();
    if (!resp) {
        co_return every(req, error_code::network_exception);
    }
    const auto& r = resp.value().body;
    if (r.error_code != 0) {
        // Kafka: a coordinator that refuses us the cluster action leaves the write unverified.
        const auto e = static_cast<error_code>(r.error_code);
        co_return every(req, e == error_code::cluster_authorization_failed
                                 ? error_code::invalid_txn_state
                                 : e);
    }
    // A partition the answer leaves out was not verified.
    verify_outcome out = every(req, error_code::invalid_txn_state);
    for (const auto& tr : r.results_by_transaction) {
        if (tr.transactional_id != req.transactional_id) {
            continue;
        }
        for (const auto& topic : tr.topic_results) {
            for (const auto& p : topic.results_by_partition) {
                auto it = out.find({topic.name, p.partition_index});
                if (it != out.end()) {
                    it->second = as_manager(static_cast<error_code>(p.partition_error_code));
                }
            }
        }
    }
    co_return out;
}

}  // namespace spool::broker::handlers
