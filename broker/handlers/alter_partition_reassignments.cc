// AlterPartitionReassignments (45, v0-1; KIP-455, v1 KIP-860): any broker takes it. Each
// partition's request is checked against the cluster (reassignment_request.h) and written into
// its record as the target (store::alter_reassignment); the controller then moves the replicas.
// The answer comes once the target is committed, not once the move is done (as Kafka): clients
// follow the move with ListPartitionReassignments.

#include "protocol/messages/alter_partition_reassignments.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/topic_ops.h"
#include "broker/metadata/internal_topics.h"

#include <fmt/format.h>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using request = protocol::alter_partition_reassignments_request;
using response = protocol::alter_partition_reassignments_response;

// Kafka's messages for the refusals a client sees most.
std::string message_of(metadata::errc e, const request::reassignable_topic& t, int32_t p,
                       const std::optional<std::vector<int32_t>>& target) {
    switch (e) {
        case metadata::errc::unknown_topic:
            return "The topic " + t.name + " or partition " + std::to_string(p) +
                   " does not exist.";
        case metadata::errc::invalid_replica_assignment:
            if (target && target->empty()) {
                return "The proposed replica assignment is empty.";
            }
            return fmt::format(
                "The proposed replica assignment [{}] names a broker twice or one that is not "
                "registered.",
                target ? fmt::format("{}", fmt::join(*target, ", ")) : std::string());
        case metadata::errc::no_reassignment_in_progress:
            return "No reassignment is in progress for topic " + t.name + " partition " +
                   std::to_string(p);
        case metadata::errc::invalid_replication_factor:
            return "The replication factor is changed but allow_replication_factor_change is "
                   "false.";
        default:
            return {};
    }
}

boost::asio::awaitable<response> run(request_ctx& ctx, request& req) {
    response resp;
    if (!charge_items<response::reassignable_topic_response::reassignable_partition_response>(
            ctx, partitions_named(req.topics))) {
        co_return resp;
    }
    resp.allow_replication_factor_change = req.allow_replication_factor_change;
    resp.error_message = std::nullopt;  // Kafka's null: no top-level error
    // Kafka: Alter on the cluster; refused, every partition carries the error too.
    auto snap = ctx.svc.store.snapshot();
    if (!request_authz(ctx, *snap).cluster(security::acl_operation::alter)) {
        resp.error_code = code(error_code::cluster_authorization_failed);
        for (const auto& t : req.topics) {
            auto& tr = resp.responses.emplace_back();
            tr.name = t.name;
            for (const auto& p : t.partitions) {
                auto& pr = tr.partitions.emplace_back();
                pr.partition_index = p.partition_index;
                pr.error_code = code(error_code::cluster_authorization_failed);
                pr.error_message = std::nullopt;
            }
        }
        co_return resp;
    }
    for (const auto& t : req.topics) {
        auto& tr = resp.responses.emplace_back();
        tr.name = t.name;
        for (const auto& p : t.partitions) {
            auto& pr = tr.partitions.emplace_back();
            pr.partition_index = p.partition_index;
            pr.error_message = std::nullopt;
            metadata::reassignment_request r{
                t.name, p.partition_index, p.replicas,
                ctx.version() < 1 || req.allow_replication_factor_change};
            auto op = ctx.svc.store.alter_reassignment(std::move(r));
            auto done = co_await std::move(op);
            if (done) {
                continue;
            }
            auto failure = from_store(done.error());
            pr.error_code = code(failure.error);
            if (done.error().category() == metadata::error_category()) {
                auto m = message_of(static_cast<metadata::errc>(done.error().value()), t,
                                    p.partition_index, p.replicas);
                pr.error_message = m.empty() ? failure.message : m;
            } else {
                pr.error_message = failure.message;
            }
            log::get("kafka")->info("AlterPartitionReassignments {}-{} refused: {}", t.name,
                                    p.partition_index, *pr.error_message);
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_alter_partition_reassignments(request_ctx& ctx) {
    return typed_handler<request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
