// ListConfigResources (API 74; KIP-714's ListClientMetricsResources at v0, KIP-1142's at v1):
// the resources a DescribeConfigs or AlterConfigs may name. Kafka 4.4's kafka-configs asks it
// before describing a group, to tell "this group has no dynamic config" from "this group does
// not exist and has none". Kafka's rules (KafkaApis.handleListConfigResources):
//   - DescribeConfigs on the cluster, else CLUSTER_AUTHORIZATION_FAILED and nothing listed;
//   - v0 lists client-metrics resources only; v1 the requested types, every type v1 knows when
//     none is named (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP); a type outside those
//     fails the whole request with UNSUPPORTED_VERSION;
//   - GROUP lists the groups that have dynamic configs (not the groups that exist), BROKER and
//     BROKER_LOGGER the live brokers, TOPIC every topic, internal ones included, in that order:
//     GROUP, CLIENT_METRICS, BROKER_LOGGER, BROKER, TOPIC.
// Spool stores no client-metrics subscriptions, so CLIENT_METRICS lists nothing.

#include "protocol/messages/list_config_resources.h"

#include "broker/handlers/authz.h"
#include "broker/handlers/config_ops.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "broker/handlers/leadership.h"

#include <algorithm>
#include <array>
#include <string>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::list_config_resources_response;

constexpr int8_t resource_client_metrics = 16;

// The types a v1 request may name, in the order Kafka lists them.
constexpr std::array<int8_t, 5> v1_types = {resource_group, resource_client_metrics,
                                            resource_broker_logger, resource_broker,
                                            resource_topic};

boost::asio::awaitable<response> list(request_ctx& ctx,
                                      protocol::list_config_resources_request& req) {
    response resp;
    auto snap = ctx.svc.store.snapshot();
    if (!request_authz(ctx, *snap).cluster(security::acl_operation::describe_configs)) {
        resp.error_code = code(error_code::cluster_authorization_failed);
        co_return resp;
    }
    auto known = [](int8_t t) { return std::ranges::find(v1_types, t) != v1_types.end(); };
    if (!std::ranges::all_of(req.resource_types, known)) {
        resp.error_code = code(error_code::unsupported_version);
        co_return resp;
    }
    auto wanted = [&](int8_t t) {
        if (ctx.version() == 0) {
            return t == resource_client_metrics;
        }
        return req.resource_types.empty() || std::ranges::find(req.resource_types, t) !=
                                                 req.resource_types.end();
    };
    auto add = [&](int8_t type, std::string name) {
        resp.config_resources.push_back({std::move(name), type, {}});
    };
    for (int8_t type : v1_types) {
        if (!wanted(type)) {
            continue;
        }
        if (type == resource_group) {
            for (const auto& [group, configs] : snap->group_configs) {
                if (!configs.empty()) {
                    add(type, group);
                }
            }
        } else if (type == resource_broker || type == resource_broker_logger) {
            for (const auto& b : live_brokers(ctx.svc, *snap, ctx.net.connection().listener)) {
                add(type, std::to_string(b.node_id));
            }
        } else if (type == resource_topic) {
            for (const auto& [name, topic] : snap->topics) {
                add(type, name);
            }
        }
    }
    co_return resp;
}

}  // namespace

handler_result handle_list_config_resources(request_ctx& ctx) {
    return typed_handler<protocol::list_config_resources_request, response, list>(ctx);
}

}  // namespace spool::broker::handlers
