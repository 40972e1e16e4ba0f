// AddPartitionsToTxn v0-v5. v0-v3 is the producer's call: Write on the transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition), then Write on each topic and the
// partition's existence (TOPIC_AUTHORIZATION_FAILED / UNKNOWN_TOPIC_OR_PARTITION for those,
// OPERATION_NOT_ATTEMPTED for the others, as Kafka's KafkaApis answers), then the coordinator's
// one outcome for every partition. v4+ is the broker-to-broker batch (KIP-890 part 1: partition
// leaders verify or add on a producer's behalf): ClusterAction on the cluster, then each
// transaction added, or with verify_only checked, independently.

#include "protocol/messages/add_partitions_to_txn.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/txn/txn_errors.h"
#include "broker/handlers/txn/txn_handlers.h"

namespace spool::broker::handlers::txn {

namespace {

using protocol::error_code;
using request = protocol::add_partitions_to_txn_request;
using response = protocol::add_partitions_to_txn_response;
using topic_result = response::add_partitions_to_txn_topic_result;
namespace txn = broker::txn;

constexpr int16_t fenced_since = 2;

std::vector<topic_result> uniform(const std::vector<request::add_partitions_to_txn_topic>& topics,
                                  error_code e) {
    std::vector<topic_result> out;
    for (const auto& t : topics) {
        auto& r = out.emplace_back();
        r.name = t.name;
        for (int32_t p : t.partitions) {
            auto& pr = r.results_by_partition.emplace_back();
            pr.partition_index = p;
            pr.partition_error_code = static_cast<int16_t>(e);
        }
    }
    return out;
}

std::vector<txn::txn_partition> partitions_of(
    const std::vector<request::add_partitions_to_txn_topic>& topics) {
    std::vector<txn::txn_partition> out;
    for (const auto& t : topics) {
        for (int32_t p : t.partitions) {
            out.push_back({t.name, p});
        }
    }
    return out;
}

// One transaction through the coordinator (add, or verify_only).
boost::asio::awaitable<std::vector<topic_result>> through_coordinator(
    request_ctx& ctx, const txn::txn_ref& ref,
    const std::vector<request::add_partitions_to_txn_topic>& topics, bool verify_only) {
    auto* svc = txn_service(ctx);
    if (!svc) {
        co_return uniform(topics, error_code::coordinator_not_available);
    }
    const int16_t version = ctx.version();
    // Only shared_ptrs in the lambdas and named std::functions (see init_producer_id.cc).
    auto shared_ref = std::make_shared<txn::txn_ref>(ref);
    auto parts = std::make_shared<std::vector<txn::txn_partition>>(partitions_of(topics));
    if (!verify_only) {
        // v5's add is a partition leader's on a TV2 producer's behalf (Kafka's
        // transactionVersionForAddPartitionsToTxn).
        const int16_t tv = version >= 5 ? txn::txn_version_epoch_bump : int16_t{0};
        txn::txn_service::call_fn<std::error_code> fn =
            [shared_ref, parts, tv](txn::txn_coordinator* c,
                                    std::function<void(std::error_code)> done) {
                if (!c) {
                    return done(make_error_code(txn::errc::not_coordinator));
                }
                c->add_partitions(*shared_ref, *parts, std::move(done), tv);
            };
        auto ec = co_await svc->call<std::error_code>(ref.transactional_id, std::move(fn));
        co_return uniform(topics, txn_error(ec, version, fenced_since));
    }
    txn::txn_service::call_fn<txn::txn_coordinator::verify_result> fn =
        [shared_ref, parts](txn::txn_coordinator* c,
                            std::function<void(txn::txn_coordinator::verify_result)> done) {
            if (!c) {
                return done({make_error_code(txn::errc::not_coordinator), {}});
            }
            done(c->verify_partitions(*shared_ref, *parts));
        };
    auto verified = co_await svc->call<txn::txn_coordinator::verify_result>(
        ref.transactional_id, std::move(fn));
    if (verified.first) {
        co_return uniform(topics, txn_error(verified.first, version, fenced_since));
    }
    auto out = uniform(topics, error_code::none);
    for (auto& t : out) {
        for (auto& p : t.results_by_partition) {
            p.partition_error_code = static_cast<int16_t>(
                txn_error(verified.second[{t.name, p.partition_index}], version, fenced_since));
        }
    }
    co_return out;
}

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    using security::acl_operation;
    if (ctx.version() >= 4) {
        if (!authz.cluster(acl_operation::cluster_action)) {
            resp.error_code = static_cast<int16_t>(error_code::cluster_authorization_failed);
            co_return resp;
        }
        for (auto& t : req.transactions) {
            auto& r = resp.results_by_transaction.emplace_back();
            r.transactional_id = t.transactional_id;
            const txn::txn_ref ref{t.transactional_id, t.producer_id, t.producer_epoch};
            r.topic_results = co_await through_coordinator(ctx, ref, t.topics, t.verify_only);
        }
        co_return resp;
    }
    const auto& topics = req.v3_and_below_topics;
    if (!authz.allowed(acl_operation::write, security::resource_type::transactional_id,
                       req.v3_and_below_transactional_id)) {
        resp.results_by_topic_v3_and_below =
            uniform(topics, error_code::transactional_id_authorization_failed);
        co_return resp;
    }
    // Every partition checked first: one refused or unknown partition fails the request, the
    // others OPERATION_NOT_ATTEMPTED.
    bool refused = false;
    std::vector<topic_result> checked = uniform(topics, error_code::none);
    for (size_t i = 0; i < topics.size(); ++i) {
        const bool allowed = authz.topic(acl_operation::write, topics[i].name);
        const auto* topic = snap->find(topics[i].name);
        for (auto& p : checked[i].results_by_partition) {
            error_code e = error_code::none;
            if (!allowed) {
                e = error_code::topic_authorization_failed;
            } else if (!topic || !topic->has_partition(p.partition_index)) {
                e = error_code::unknown_topic_or_partition;
            }
            p.partition_error_code = static_cast<int16_t>(e);
            refused = refused || e != error_code::none;
        }
    }
    if (refused) {
        for (auto& t : checked) {
            for (auto& p : t.results_by_partition) {
                if (p.partition_error_code == 0) {
                    p.partition_error_code = static_cast<int16_t>(error_code::operation_not_attempted);
                }
            }
        }
        resp.results_by_topic_v3_and_below = std::move(checked);
        co_return resp;
    }
    const txn::txn_ref ref{req.v3_and_below_transactional_id, req.v3_and_below_producer_id,
                           req.v3_and_below_producer_epoch};
    resp.results_by_topic_v3_and_below = co_await through_coordinator(ctx, ref, topics, false);
    co_return resp;
}

}  // namespace

handler_result handle_add_partitions_to_txn(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::txn
