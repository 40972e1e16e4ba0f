// ReadShareGroupState v0 and WriteShareGroupState v0-1 as the share coordinator (broker/share)
// answers a data partition's leader (share_state_client.h): the key's __share_group_state
// partition must be led here (else NOT_COORDINATOR; still loading: the same, Spool loads in one
// go), with Kafka's fencing (FENCED_LEADER_EPOCH, FENCED_STATE_EPOCH).
//
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
#include "broker/handlers/share_persist.h"
#include "broker/handlers/share_state_errors.h"
#include "broker/share/share_service.h"
#include "protocol/messages/delete_share_group_state.h"
#include "protocol/messages/initialize_share_group_state.h"
#include "protocol/messages/read_share_group_state.h"
#include "protocol/messages/read_share_group_state_summary.h"
#include "protocol/messages/write_share_group_state.h"

#include <functional>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;

// Answers each requested partition with `on` (its topic resolved and ClusterAction checked):
// `on(partition_result&, partition_data, share_state_key)` is awaited per partition.
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
                share_state_key key{{topic->name, model::partition_id(p.partition)}, t.topic_id};
                co_await on(po, p, key);
            }
        }
    }
    co_return resp;
}

using read_request = protocol::read_share_group_state_summary_request;
using read_response = protocol::read_share_group_state_summary_response;
using read_partition = read_response::read_state_summary_result::partition_result;

boost::asio::awaitable<void> read_one(request_ctx& ctx, const std::string& group,
                                      read_partition& out, share_state_key key) {
    // A group not loaded here since this broker took the partition over: its persisted state.
    co_await share_ensure_state(ctx.svc, key, group, false);
    const auto limits = share_limits_of(ctx.svc, group);
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
    co_await on_partition<int>(ctx.svc.partitions, key.tp, fn);
}

boost::asio::awaitable<read_response> read(request_ctx& ctx, read_request& req) {
    co_return co_await each_partition<read_request, read_response>(
        ctx, req, [&](read_partition& out, const auto&, const share_state_key& key) {
            return read_one(ctx, req.group_id, out, key);
        });
}

// The persister's answer for one partition led here (share_persist.h).
template <class Partition>
boost::asio::awaitable<void> persisted_one(Partition& out,
                                           boost::asio::awaitable<error_code> change) {
    out.error_code = code(co_await std::move(change));
}

using init_request = protocol::initialize_share_group_state_request;
using init_response = protocol::initialize_share_group_state_response;
using init_partition = init_response::initialize_state_result::partition_result;

boost::asio::awaitable<init_response> initialize(request_ctx& ctx, init_request& req) {
    co_return co_await each_partition<init_request, init_response>(
        ctx, req, [&](init_partition& out, const auto& in, const share_state_key& key) {
            return persisted_one(out, share_reinitialize(ctx.svc, key, req.group_id,
                                                         in.start_offset));
        });
}

using delete_request = protocol::delete_share_group_state_request;
using delete_response = protocol::delete_share_group_state_response;
using delete_partition = delete_response::delete_state_result::partition_result;

boost::asio::awaitable<delete_response> delete_state(request_ctx& ctx, delete_request& req) {
    co_return co_await each_partition<delete_request, delete_response>(
        ctx, req, [&](delete_partition& out, const auto&, const share_state_key& key) {
            return persisted_one(out, share_forget(ctx.svc, key, req.group_id));
        });
}

// ---- the share coordinator's ReadShareGroupState / WriteShareGroupState (broker/share) ----

using state_read_request = protocol::read_share_group_state_request;
using state_read_response = protocol::read_share_group_state_response;
using state_read_partition = state_read_response::read_state_result::partition_result;
using state_write_request = protocol::write_share_group_state_request;
using state_write_response = protocol::write_share_group_state_response;
using state_write_partition = state_write_response::write_state_result::partition_result;

share::share_key coordinator_key_of(const std::string& group, const share_state_key& key) {
    return share::share_key{group, key.topic_id, key.tp.partition.value()};
}

boost::asio::awaitable<void> state_read_one(services& svc, share::share_key key,
                                            int32_t leader_epoch, state_read_partition& out) {
    out.start_offset = -1;
    if (svc.share_state == nullptr) {
        out.error_code = code(error_code::coordinator_not_available);
        co_return;
    }
    auto r = co_await svc.share_state->read(std::move(key), leader_epoch);
    if (!r) {
        out.error_code = code(share_state_error(r.error()));
        co_return;
    }
    out.state_epoch = r.value().state_epoch;
    out.start_offset = r.value().start_offset;
    for (const auto& b : r.value().batches) {
        auto& o = out.state_batches.emplace_back();
        o.first_offset = b.first_offset;
        o.last_offset = b.last_offset;
        o.delivery_state = b.delivery_state;
        o.delivery_count = b.delivery_count;
    }
}

boost::asio::awaitable<state_read_response> state_read(request_ctx& ctx, state_read_request& req) {
    co_return co_await each_partition<state_read_request, state_read_response>(
        ctx, req, [&](state_read_partition& out, const auto& in, const share_state_key& key) {
            return state_read_one(ctx.svc, coordinator_key_of(req.group_id, key), in.leader_epoch,
                                  out);
        });
}

template <class In>
share::share_state state_from(const In& in) {
    share::share_state s;
    s.state_epoch = in.state_epoch;
    s.leader_epoch = in.leader_epoch;
    s.start_offset = in.start_offset;
    s.delivery_complete_count = in.delivery_complete_count;
    for (const auto& b : in.state_batches) {
        s.batches.push_back({b.first_offset, b.last_offset, b.delivery_state, b.delivery_count});
    }
    return s;
}

boost::asio::awaitable<void> state_write_one(services& svc, share::share_key key,
                                             share::share_state state,
                                             state_write_partition& out) {
    if (svc.share_state == nullptr) {
        out.error_code = code(error_code::coordinator_not_available);
        co_return;
    }
    auto ec = co_await svc.share_state->write(std::move(key), std::move(state));
    out.error_code = code(share_state_error(ec));
}

boost::asio::awaitable<state_write_response> state_write(request_ctx& ctx,
                                                         state_write_request& req) {
    co_return co_await each_partition<state_write_request, state_write_response>(
        ctx, req, [&](state_write_partition& out, const auto& in, const share_state_key& key) {
            return state_write_one(ctx.svc, coordinator_key_of(req.group_id, key), state_from(in),
                                   out);
        });
}

}  // namespace

handler_result handle_read_share_group_state(request_ctx& ctx) {
    return typed_handler<state_read_request, state_read_response, state_read>(ctx);
}

handler_result handle_write_share_group_state(request_ctx& ctx) {
    return typed_handler<state_write_request, state_write_response, state_write>(ctx);
}

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
