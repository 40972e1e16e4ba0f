// OffsetFetch v0-v9: one group (v0-7) or many (v8+); null topics (v2+) fetch every committed
// partition. Offsets become visible only once durable; with require_stable (v7+) a partition a
// transaction holds pending offsets for answers UNSTABLE_OFFSET_COMMIT (the client retries).

#include "protocol/messages/offset_fetch.h"

#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

#include <map>

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::offset_fetch_response;
using coordinator::errc;
using coordinator::offset_fetch_result;
using offset_entry = decltype(offset_fetch_result::offsets)::value_type;
using response_partition = response::offset_fetch_response_topic::offset_fetch_response_partition;

// Kafka's authorization of OffsetFetch: Describe on the group (the group's error otherwise),
// then Describe on each topic: a named partition of a topic the caller may not describe is
// TOPIC_AUTHORIZATION_FAILED, and such a topic is left out of "all the group's offsets".
void authorize_topics(const request_ctx& ctx, bool named, offset_fetch_result& r) {
    if (!ctx.svc.authorizer.enabled()) {
        return;
    }
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    auto denied = [&](const offset_entry& o) {
        return !authz.topic(security::acl_operation::describe, o.tp.topic);
    };
    if (!named) {
        std::erase_if(r.offsets, denied);
        return;
    }
    for (auto& o : r.offsets) {
        if (denied(o)) {
            o.offset = -1;
            o.leader_epoch = -1;
            o.metadata = "";
            o.error = protocol::make_error_code(protocol::error_code::topic_authorization_failed);
        }
    }
}

boost::asio::awaitable<offset_fetch_result> fetch(request_ctx& ctx,
                                                  coordinator::offset_fetch_request fr) {
    if (!group_allowed(ctx, security::acl_operation::describe, fr.group_id)) {
        offset_fetch_result r;
        r.error = protocol::make_error_code(protocol::error_code::group_authorization_failed);
        co_return r;
    }
    const bool named = fr.topics.has_value();
    auto* svc = group_service(ctx);
    if (!svc) {
        offset_fetch_result r;
        r.error = errc::coordinator_not_available;
        co_return r;
    }
    auto group_id = fr.group_id;
    auto shared = std::make_shared<coordinator::offset_fetch_request>(std::move(fr));
    coordinator::coordinator_service::call_fn<offset_fetch_result> fn =
        [shared](coordinator::group_coordinator* c, std::function<void(offset_fetch_result)> done) {
            if (!c) {
                offset_fetch_result r;
                r.error = errc::not_coordinator;
                done(std::move(r));
                return;
            }
            done(c->fetch_offsets(*shared));
        };
    auto r = co_await svc->call<offset_fetch_result>(group_id, std::move(fn));
    authorize_topics(ctx, named, r);
    co_return r;
}

// Groups the result's partitions by topic in first-seen order.
template <class Topic>
std::vector<Topic> by_topic(offset_fetch_result& r) {
    std::vector<Topic> topics;
    std::map<std::string, size_t> index;
    for (auto& o : r.offsets) {
        auto [it, added] = index.try_emplace(o.tp.topic, topics.size());
        if (added) {
            topics.emplace_back().name = o.tp.topic;
        }
        auto& p = topics[it->second].partitions.emplace_back();
        p.partition_index = o.tp.partition.value();
        p.committed_offset = o.offset;
        p.committed_leader_epoch = o.leader_epoch;
        p.metadata = o.metadata.value_or("");
        p.error_code = kafka_code(o.error);
    }
    return topics;
}

// Every named partition becomes a coordinator result entry and a response partition.
template <class Topics>
uint64_t named_partitions(const std::optional<Topics>& topics) {
    uint64_t n = 0;
    if (topics) {
        for (const auto& t : *topics) {
            n += t.partition_indexes.size();
        }
    }
    return n;
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::offset_fetch_request& req) {
    response resp;
    uint64_t named = named_partitions(req.topics);
    for (const auto& g : req.groups) {
        named += named_partitions(g.topics);
    }
    if (!charge_items<response_partition>(ctx, named, sizeof(offset_entry)) ||
        !charge_items<response::offset_fetch_response_group>(ctx, req.groups.size())) {
        co_return resp;
    }
    if (ctx.version() >= 8) {
        for (auto& g : req.groups) {
            coordinator::offset_fetch_request fr;
            fr.group_id = g.group_id;
            fr.require_stable = req.require_stable;
            if (ctx.version() >= 9) {
                fr.member_id = g.member_id;
                fr.member_epoch = g.member_epoch;
            }
            if (g.topics) {
                fr.topics.emplace();
                for (auto& t : *g.topics) {
                    fr.topics->push_back({t.name, t.partition_indexes});
                }
            }
            auto r = co_await fetch(ctx, std::move(fr));
            // All of a group's offsets: bounded by the group, but a request may repeat it.
            if (!g.topics &&
                !charge_items<response_partition>(ctx, r.offsets.size(), sizeof(offset_entry))) {
                co_return resp;
            }
            auto& out = resp.groups.emplace_back();
            out.group_id = g.group_id;
            out.error_code = kafka_code(r.error);
            using topic_t = response::offset_fetch_response_group::offset_fetch_response_topics;
            out.topics = by_topic<topic_t>(r);
        }
        co_return resp;
    }
    coordinator::offset_fetch_request fr;
    fr.group_id = req.group_id;
    fr.require_stable = ctx.version() >= 7 && req.require_stable;
    if (req.topics) {
        fr.topics.emplace();
        for (auto& t : *req.topics) {
            fr.topics->push_back({t.name, t.partition_indexes});
        }
    }
    auto requested = fr.topics;
    auto r = co_await fetch(ctx, std::move(fr));
    if (r.error && ctx.version() < 2 && requested) {
        // v0-1 have no top-level error: every requested partition carries it.
        for (auto& t : *requested) {
            for (int32_t p : t.partitions) {
                r.offsets.push_back({{t.topic, model::partition_id{p}}, -1, -1, "", r.error});
            }
        }
    }
    resp.error_code = kafka_code(r.error);
    resp.topics = by_topic<response::offset_fetch_response_topic>(r);
    co_return resp;
}

}  // namespace

handler_result handle_offset_fetch(request_ctx& ctx) {
    return typed_handler<protocol::offset_fetch_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
