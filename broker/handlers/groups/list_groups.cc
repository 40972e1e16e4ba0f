// ListGroups v0-v5: every group of every __consumer_offsets partition this broker coordinates
// (the partitions other brokers lead are theirs to list), optionally filtered by state (v4+) and
// type (v5+: "classic" or "consumer").

#include "protocol/messages/list_groups.h"

#include "broker/coordinator/group.h"
#include "broker/handlers/groups/group_errors.h"
#include "broker/handlers/groups/group_handlers.h"
#include "broker/handlers/groups/group_util.h"
#include "broker/handlers/handler_util.h"

#include <algorithm>
#include <cctype>

namespace spool::broker::handlers::groups {

namespace {

using response = protocol::list_groups_response;
using coordinator::errc;

struct listing {
    std::error_code error;
    std::vector<coordinator::group_listing> groups;
};

bool iequals(std::string_view a, std::string_view b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) ==
               std::tolower(static_cast<unsigned char>(y));
    });
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::list_groups_request& req) {
    response resp;
    auto* svc = group_service(ctx);
    if (!svc) {
        resp.error_code = kafka_code(errc::coordinator_not_available);
        co_return resp;
    }
    // Kafka: every group with Describe on the cluster, else those the caller may describe.
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    const bool all_groups = authz.cluster(security::acl_operation::describe);
    for (int32_t p = 0; p < svc->partitions(); ++p) {
        coordinator::coordinator_service::call_fn<listing> fn =
            [](coordinator::group_coordinator* c, std::function<void(listing)> done) {
                listing out;
                if (c) {
                    out.groups = c->list_groups(&out.error);
                }
                done(std::move(out));
            };
        auto l = co_await svc->call_partition<listing>(p, std::move(fn));
        if (l.error == make_error_code(errc::not_coordinator)) {
            // Led by another broker, which lists its groups itself: an admin client asks every
            // broker and joins the answers (Kafka lists the partitions it coordinates). An error
            // here would drop this broker's whole answer: kafka-consumer-groups --list fails and
            // MirrorMaker's listGroups().valid() finds no group to checkpoint.
            continue;
        }
        if (l.error) {
            // A partition still loading makes the whole answer incomplete: say so (Kafka too).
            resp.error_code = kafka_code(l.error);
            continue;
        }
        for (auto& g : l.groups) {
            if (!all_groups && !authz.group(security::acl_operation::describe, g.group_id)) {
                continue;
            }
            if (ctx.version() >= 5 && !req.types_filter.empty() &&
                std::none_of(req.types_filter.begin(), req.types_filter.end(),
                             [&](const std::string& t) { return iequals(t, g.group_type); })) {
                continue;
            }
            std::string_view state =
                g.state_name.empty() ? coordinator::to_string(g.state) : g.state_name;
            if (ctx.version() >= 4 && !req.states_filter.empty() &&
                std::none_of(req.states_filter.begin(), req.states_filter.end(),
                             [&](const std::string& s) { return iequals(s, state); })) {
                continue;
            }
            auto& out = resp.groups.emplace_back();
            out.group_id = std::move(g.group_id);
            out.protocol_type = std::move(g.protocol_type);
            out.group_state = std::string(state);
            out.group_type = g.group_type;
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_list_groups(request_ctx& ctx) {
    return typed_handler<protocol::list_groups_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers::groups
