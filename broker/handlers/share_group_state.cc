// ReadShareGroupStateSummary v0-v1, InitializeShareGroupState v0 and DeleteShareGroupState v0 as
// a partition leader answers them: the share state it keeps for a group (partition's door,
// replication/share_partition.h), for the share-group admin APIs of the broker coordinating the
// group (share_state_access.h). Kafka's share coordinator answers the same requests from
// __share_group_state; like Kafka, only a broker may ask (ClusterAction on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED on every partition).
//
// A partition whose group has no state here answers a start offset of -1 and no delivery
// complete count (-1): Kafka's "uninitialized", which the coordinator shows as no offset and no
// lag. A topic id the metadata does not know: UNKNOWN_TOPIC_OR_PARTITION.

#include "broker/handlers/authz.h"
#include "broker/handlers/error_mapping.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/partition_call.h"
#include "broker/handlers/services.h"
#include "broker/handlers/share_partitions.h"
#include "protocol/messages/delete_share_group_state.h"
#include "protocol/messages/initialize_share_group_state.h"
#include "protocol/messages/read_share_group_state_summary.h"

#include <functional>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;

// Answers each requested partition with `on` (its topic resolved and ClusterAction checked):
// `on(partition_result&, topic_partition)` is awaited per partition.
template <class Request, class Response, class On>
boost::asio::awaitable<Response> each_partition(request_ctx& ctx, Request& req, On on) {
    Response resp;
    size_t count = 0;
    for (const auto& t : req.topics) {
        count += t.partitions.size();
    }
    using result = typename decltype(resp.results)::value_type;
    if (!charge_items<typename decltype(result{}.partitions)::value_type>(ctx, count)) {
        co_return resp;
    }
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    const bool allowed = authz.cluster(security::acl_operation::cluster_action);
    for (const auto& t : req.topics) {
        auto& out = resp.results.emplace_back();
        out.topic_id = t.topic_id;
        const auto* topic = snap->find(t.topic_id);
        for (const auto& p : t.partitions) {
            auto& po = out.partitions.emplace_back();
            po.partition = p.partition;
            if (!allowed) {
                po.error_code = code(error_code::cluster_authorization_failed);
            } else if (topic == nullptr || !topic->has_partition(p.partition)) {
                po.error_code = code(error_code::unknown_topic_or_partition);
            } else {
                model::topic_partition tp{topic->name, model::partition_id(p.partition)};
                co_await on(po, p, tp);
            }
        }
    }
    co_return resp;
}

using read_request = protocol::read_share_group_state_summary_request;
using read_response = protocol::read_share_group_state_summary_response;
using read_partition = read_response::read_state_summary_result::partition_result;

boost::asio::awaitable<void> read_one(request_ctx& ctx, const std::string& group,
                                      read_partition& out, model::topic_partition tp) {
    const auto limits = share_limits_of(ctx.svc);
    std::function<int(replication::partition*)> fn = [&](replication::partition* p) {
        out.start_offset = -1;
        out.delivery_complete_count = -1;
        if (p == nullptr) {
            out.error_code = code(error_code::not_leader_or_follower);
            return 0;
        }
        auto r = p->share_summary_of(group, limits);
        if (!r) {
            out.error_code = code(to_kafka_error(r.error()));
        } else if (r.value()) {
            out.start_offset = r.value()->start_offset;
            out.leader_epoch = r.value()->leader_epoch;
            out.delivery_complete_count =
                static_cast<int32_t>(r.value()->delivery_complete_count);
        }
        return 0;
    };
    co_await on_partition<int>(ctx.svc.partitions, tp, fn);
}

boost::asio::awaitable<read_response> read(request_ctx& ctx, read_request& req) {
    co_return co_await each_partition<read_request, read_response>(
        ctx, req, [&](read_partition& out, const auto&, model::topic_partition tp) {
            return read_one(ctx, req.group_id, out, std::move(tp));
        });
}

// A door method returning a result, its Kafka error as the partition's answer.
template <class Partition, class Op>
boost::asio::awaitable<void> door_one(request_ctx& ctx, Partition& out, model::topic_partition tp,
                                      Op op) {
    std::function<int(replication::partition*)> fn = [&](replication::partition* p) {
        if (p == nullptr) {
            out.error_code = code(error_code::not_leader_or_follower);
            return 0;
        }
        auto r = op(*p);
        out.error_code = r ? 0 : code(to_kafka_error(r.error()));
        return 0;
    };
    co_await on_partition<int>(ctx.svc.partitions, tp, fn);
}

using init_request = protocol::initialize_share_group_state_request;
using init_response = protocol::initialize_share_group_state_response;
using init_partition = init_response::initialize_state_result::partition_result;

boost::asio::awaitable<init_response> initialize(request_ctx& ctx, init_request& req) {
    co_return co_await each_partition<init_request, init_response>(
        ctx, req, [&](init_partition& out, const auto& in, model::topic_partition tp) {
            const int64_t start = in.start_offset;
            return door_one(ctx, out, std::move(tp), [&req, start](replication::partition& p) {
                return p.share_initialize(req.group_id, start);
            });
        });
}

using delete_request = protocol::delete_share_group_state_request;
using delete_response = protocol::delete_share_group_state_response;
using delete_partition = delete_response::delete_state_result::partition_result;

boost::asio::awaitable<delete_response> delete_state(request_ctx& ctx, delete_request& req) {
    co_return co_await each_partition<delete_request, delete_response>(
        ctx, req, [&](delete_partition& out, const auto&, model::topic_partition tp) {
            return door_one(ctx, out, std::move(tp),
                            [&req](replication::partition& p) { return p.share_delete(req.group_id); });
        });
}

}  // namespace

handler_result handle_read_share_group_state_summary(request_ctx& ctx) {
    return typed_handler<read_request, read_response, read>(ctx);
}

handler_result handle_initialize_share_group_state(request_ctx& ctx) {
    return typed_handler<init_request, init_response, initialize>(ctx);
}

handler_result handle_delete_share_group_state(request_ctx& ctx) {
    return typed_handler<delete_request, delete_response, delete_state>(ctx);
}

}  // namespace spool::broker::handlers
