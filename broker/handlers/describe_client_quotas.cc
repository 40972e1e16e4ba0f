// DescribeClientQuotas (KIP-546): Spool enforces no client quotas (producer_byte_rate,
// consumer_byte_rate, request_percentage...) and stores none, so every valid filter matches
// nothing and the answer is an empty list, which is what Kafka answers a cluster without quotas.
// It is served so that `kafka-configs --describe --entity-type users` (which asks it beside
// DescribeUserScramCredentials) works; AlterClientQuotas is not advertised. The filter is
// validated with Kafka's rules and messages (ClientQuotasImage.describe), and the request needs
// DescribeConfigs on the cluster.

#include "protocol/messages/describe_client_quotas.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"

#include <set>
#include <string>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::describe_client_quotas_response;

constexpr int8_t match_exact = 0;
constexpr int8_t match_default = 1;
constexpr int8_t match_specified = 2;

// "" when the filter is one Kafka accepts, else its InvalidRequestException message.
std::string invalid_filter(const protocol::describe_client_quotas_request& req) {
    std::set<std::string> types;
    for (const auto& c : req.components) {
        if (c.entity_type != "user" && c.entity_type != "client-id" && c.entity_type != "ip") {
            return "Custom entity type " + c.entity_type + " not supported";
        }
        if (!types.insert(c.entity_type).second) {
            return "Entity type " + c.entity_type + " cannot appear more than once in the filter.";
        }
        switch (c.match_type) {
        case match_exact:
            if (!c.match) {
                return "Request specified MATCH_TYPE_EXACT, but set match string to null.";
            }
            break;
        case match_default:
        case match_specified:
            if (c.match) {
                return "Request specified MATCH_TYPE_DEFAULT or MATCH_TYPE_SPECIFIED, but also "
                       "specified a match string.";
            }
            break;
        default:
            return "Unknown match type " + std::to_string(c.match_type);
        }
    }
    if (types.contains("ip") && (types.contains("user") || types.contains("client-id"))) {
        return "Invalid entity filter component combination, IP filter component should not be "
               "used with user or clientId filter component.";
    }
    return {};
}

boost::asio::awaitable<response> describe(request_ctx& ctx,
                                          protocol::describe_client_quotas_request& req) {
    response resp;
    auto snap = ctx.svc.store.snapshot();
    if (!request_authz(ctx, *snap).cluster(security::acl_operation::describe_configs)) {
        resp.error_code = code(error_code::cluster_authorization_failed);
        resp.error_message = "Cluster authorization failed.";
        resp.entries.reset();
        co_return resp;
    }
    if (auto why = invalid_filter(req); !why.empty()) {
        resp.error_code = code(error_code::invalid_request);
        resp.error_message = std::move(why);
        resp.entries.reset();
        co_return resp;
    }
    resp.entries.emplace();  // no quotas are stored: nothing matches
    co_return resp;
}

}  // namespace

handler_result handle_describe_client_quotas(request_ctx& ctx) {
    return typed_handler<protocol::describe_client_quotas_request, response, describe>(ctx);
}

}  // namespace spool::broker::handlers
