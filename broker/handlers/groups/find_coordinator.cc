// FindCoordinator v0-v6. Groups (key type 0) are answered with the live leader of the key's
// __consumer_offsets partition (host and port from the metadata snapshot, for the listener the
// request came in on), as Kafka does; a partition without a live leader is
// COORDINATOR_NOT_AVAILABLE (retriable). With one broker that is always this broker. Transactions
// (key type 1) likewise with the leader of the id's __transaction_state partition (broker/txn),
// which the first such request creates, as Kafka's does (COORDINATOR_NOT_AVAILABLE meanwhile).
// Batched keys (v4+) get one entry each.

#include "protocol/messages/find_coordinator.h"

#include "broker/coordinator/coordinator_service.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/leadership.h"
#include "broker/txn/txn_service.h"

namespace spool::broker::handlers::groups {

namespace {

using protocol::error_code;
using response = protocol::find_coordinator_response;

constexpr int8_t key_type_group = 0;
constexpr int8_t key_type_transaction = 1;

struct answer {
    error_code error = error_code::none;
    std::optional<std::string> message;  // defaults to the error's name
    int32_t node_id = -1;
    std::string host;
    int32_t port = -1;
};

answer failed(error_code e) {
    answer a;
    a.error = e;
    return a;
}

// The live leader of the key's partition of its coordinator topic (nullopt: the coordinator is
// not serving yet).
answer locate_leader(request_ctx& ctx,
                     std::optional<std::pair<std::string_view, int32_t>> where) {
    if (!where) {
        return failed(error_code::coordinator_not_available);
    }
    auto snap = ctx.svc.store.snapshot();
    const auto* topic = snap->find(where->first);
    const int32_t p = where->second;
    if (!topic || !topic->has_partition(p)) {
        return failed(error_code::coordinator_not_available);
    }
    const int32_t leader = topic->partitions[static_cast<size_t>(p)].leader;
    auto b = live_broker(ctx.svc, *snap, leader, ctx.net.connection().listener);
    if (leader < 0 || !b) {
        return failed(error_code::coordinator_not_available);
    }
    return {error_code::none, std::nullopt, b->node_id, std::move(b->host), b->port};
}

answer locate(request_ctx& ctx, int8_t key_type, const std::string& key) {
    // Kafka: Describe on the group or on the transactional id, before anything else.
    if (ctx.svc.authorizer.enabled() &&
        (key_type == key_type_group || key_type == key_type_transaction)) {
        auto snap = ctx.svc.store.snapshot();
        request_authz authz(ctx, *snap);
        // With Kafka's messages (Errors.<code>.message()), which clients print.
        if (key_type == key_type_group && !authz.group(security::acl_operation::describe, key)) {
            answer a = failed(error_code::group_authorization_failed);
            a.message = "Group authorization failed.";
            return a;
        }
        if (key_type == key_type_transaction &&
            !authz.allowed(security::acl_operation::describe,
                           security::resource_type::transactional_id, key)) {
            answer a = failed(error_code::transactional_id_authorization_failed);
            a.message = "Transactional Id authorization failed.";
            return a;
        }
    }
    if (key_type == key_type_transaction) {
        if (ctx.svc.transactions) {
            ctx.svc.transactions->ensure_topic();  // COORDINATOR_NOT_AVAILABLE until it exists
        }
        return locate_leader(ctx, ctx.svc.transactions && ctx.svc.transactions->started()
                                      ? std::optional(std::pair(
                                            broker::txn::transaction_state_topic,
                                            ctx.svc.transactions->partition_for(key)))
                                      : std::nullopt);
    }
    if (key_type != key_type_group) {
        return failed(error_code::invalid_request);
    }
    auto* svc = group_service(ctx);
    return locate_leader(ctx, svc ? std::optional(std::pair(coordinator::offsets_topic,
                                                            svc->partition_for(key)))
                                  : std::nullopt);
}

std::optional<std::string> message_of(const answer& a) {
    if (a.error == error_code::none) {
        return std::nullopt;
    }
    return a.message ? a.message : std::optional<std::string>(std::string(protocol::name(a.error)));
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::find_coordinator_request& req) {
    response resp;
    if (ctx.version() < 4) {
        auto a = locate(ctx, ctx.version() >= 1 ? req.key_type : key_type_group, req.key);
        resp.error_code = static_cast<int16_t>(a.error);
        resp.error_message = message_of(a);
        resp.node_id = a.node_id;
        resp.host = a.host;
        resp.port = a.port;
        co_return resp;
    }
    resp.coordinators.reserve(req.coordinator_keys.size());
    for (const auto& key : req.coordinator_keys) {
        auto a = locate(ctx, req.key_type, key);
        auto& c = resp.coordinators.emplace_back();
        c.key = key;
        c.error_code = static_cast<int16_t>(a.error);
        c.error_message = message_of(a);
        c.node_id = a.node_id;
        c.host = a.host;
        c.port = a.port;
    }
    co_return resp;
}

}  // namespace

handler_result handle_find_coordinator(request_ctx& ctx) {
    return typed_handler<protocol::find_coordinator_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
