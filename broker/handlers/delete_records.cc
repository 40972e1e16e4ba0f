#include "protocol/messages/delete_records.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/error_mapping.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/leadership.h"
#include "broker/handlers/partition_call.h"
#include "broker/metadata/internal_topics.h"
#include "common/log.h"

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::delete_records_response;
using partition_result = response::delete_records_topic_result::delete_records_partition_result;

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::delete_records_request& req) {
    auto& svc = ctx.svc;
    response resp;
    if (!charge_items<partition_result>(ctx, partitions_named(req.topics)) ||
        !charge_items<response::delete_records_topic_result>(ctx, req.topics.size())) {
        co_return resp;
    }
    auto snap = svc.store.snapshot();
    const bool may_lead = svc.store.may_lead();
    // Kafka: Delete on each topic, checked before the topic is looked up.
    request_authz authz(ctx, *snap);
    for (const auto& t : req.topics) {
        auto& tr = resp.topics.emplace_back();
        tr.name = t.name;
        const auto* topic = snap->find(t.name);
        const bool denied = !authz.topic(security::acl_operation::remove, t.name);
        for (const auto& p : t.partitions) {
            partition_result out;
            out.partition_index = p.partition_index;
            out.low_watermark = -1;
            if (denied) {
                out.error_code = code(error_code::topic_authorization_failed);
                tr.partitions.push_back(out);
                continue;
            }
            if (topic == nullptr || !topic->has_partition(p.partition_index)) {
                out.error_code = code(error_code::unknown_topic_or_partition);
                tr.partitions.push_back(out);
                continue;
            }
            // Kafka's ReplicaManager.deleteRecordsOnLocalLog: never on an internal topic.
            if (metadata::is_internal_topic(t.name)) {
                out.error_code = code(error_code::invalid_topic_exception);
                tr.partitions.push_back(out);
                continue;
            }
            if (auto e = leadership_error(svc, may_lead, topic->partitions[p.partition_index]);
                e != error_code::none) {
                out.error_code = code(e);
                tr.partitions.push_back(out);
                continue;
            }
            int64_t offset = p.offset;
            model::topic_partition tp{t.name, model::partition_id(p.partition_index)};
            std::function<partition_result(replication::partition*)> fn =
                [offset](replication::partition* part) {
                    partition_result pr;
                    if (part == nullptr) {
                        // Led here per metadata, but the log is not open yet: retriable.
                        pr.error_code = code(error_code::not_leader_or_follower);
                        return pr;
                    }
                    auto moved = part->delete_records(model::offset(offset));
                    if (!moved) {
                        pr.error_code = code(to_kafka_error(moved.error()));
                        return pr;
                    }
                    pr.low_watermark = moved.value().value();
                    return pr;
                };
            auto r = co_await on_partition<partition_result>(svc.partitions, tp, fn);
            r.partition_index = p.partition_index;
            tr.partitions.push_back(r);
        }
    }
    // The new log starts are durable before the client hears of them: a crash after the answer
    // must not bring the deleted records back (log-start-offset-checkpoint, off the shards).
    bool moved_any = false;
    for (const auto& tr : resp.topics) {
        for (const auto& pr : tr.partitions) {
            moved_any = moved_any || pr.error_code == 0;
        }
    }
    if (moved_any) {
        if (auto ec = co_await svc.partitions.write_checkpoints()) {
            log::get("kafka")->error("DeleteRecords: log start checkpoint not written: {}",
                                     ec.message());
            for (auto& tr : resp.topics) {
                for (auto& pr : tr.partitions) {
                    if (pr.error_code == 0) {
                        pr.error_code = code(error_code::kafka_storage_error);
                    }
                }
            }
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_delete_records(request_ctx& ctx) {
    return typed_handler<protocol::delete_records_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
