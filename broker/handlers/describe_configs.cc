#include "protocol/messages/describe_configs.h"

#include "broker/config/group_config.h"
#include "broker/handlers/config_ops.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"

#include <algorithm>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;
using response = protocol::describe_configs_response;
using result_entry = response::describe_configs_result::describe_configs_resource_result;

// Kafka's DescribeConfigsResponse ConfigType numbers.
int8_t kafka_config_type(config::property_type t) {
    switch (t) {
        case config::property_type::boolean:
            return 1;
        case config::property_type::string:
            return 2;
        case config::property_type::int32:
            return 3;
        case config::property_type::int64:
            return 5;
        case config::property_type::double_:
            return 6;
        case config::property_type::list:
            return 7;
        case config::property_type::password:
            return 9;
    }
    return 0;
}

result_entry entry(const config::property& p, const config::described_value& d, bool synonyms,
                   bool docs, bool read_only) {
    result_entry e;
    e.name = std::string(p.name);
    e.value = p.type == config::property_type::password ? std::nullopt : d.value;
    e.read_only = read_only;
    e.is_default = d.source == config::config_source::default_config;
    e.config_source = static_cast<int8_t>(d.source);
    e.is_sensitive = p.type == config::property_type::password;
    if (synonyms) {
        for (const auto& s : d.synonyms) {
            e.synonyms.push_back({s.name, s.value, static_cast<int8_t>(s.source), {}});
        }
    }
    e.config_type = kafka_config_type(p.type);
    e.documentation = docs ? std::optional<std::string>(std::string(p.doc)) : std::nullopt;
    return e;
}

bool wanted(const std::optional<std::vector<std::string>>& keys, std::string_view name) {
    return !keys || keys->empty() || std::find(keys->begin(), keys->end(), name) != keys->end();
}

boost::asio::awaitable<response> run(request_ctx& ctx, protocol::describe_configs_request& req) {
    auto& svc = ctx.svc;
    response resp;
    bool synonyms = ctx.version() >= 1 && req.include_synonyms;
    bool docs = ctx.version() >= 3 && req.include_documentation;
    auto snap = svc.store.snapshot();
    if (!charge_items<response::describe_configs_result>(ctx, req.resources.size())) {
        co_return resp;
    }
    request_authz authz(ctx, *snap);
    for (const auto& res : req.resources) {
        // A resource's configs are bounded by the property table, but a request may repeat a
        // resource: each one built is charged before the next (at most one past the budget).
        if (!resp.results.empty() &&
            !charge_items<result_entry>(ctx, resp.results.back().configs.size(), docs ? 256 : 0)) {
            co_return resp;
        }
        auto& r = resp.results.emplace_back();
        r.resource_type = res.resource_type;
        r.resource_name = res.resource_name;
        if (auto denied = configs_denied(authz, security::acl_operation::describe_configs,
                                         res.resource_type, res.resource_name);
            denied != error_code::none) {
            r.error_code = code(denied);
            continue;
        }
        if (res.resource_type == resource_topic) {
            const auto* t = snap->find(res.resource_name);
            if (t == nullptr) {
                r.error_code = code(error_code::unknown_topic_or_partition);
                r.error_message = "Topic " + res.resource_name + " does not exist";
                continue;
            }
            for (const auto& p : config::topic_properties()) {
                if (wanted(res.configuration_keys, p.name)) {
                    auto d = config::describe_topic_key(svc.config, p, t->configs, synonyms);
                    r.configs.push_back(entry(p, d, synonyms, docs, false));
                }
            }
            continue;
        }
        if (res.resource_type == resource_broker) {
            bool cluster_default = res.resource_name.empty();
            if (!cluster_default && res.resource_name != std::to_string(svc.node_id)) {
                r.error_code = code(error_code::invalid_request);
                r.error_message = "Unexpected broker id " + res.resource_name;
                continue;
            }
            auto dyn = cluster_default
                           ? svc.config.dynamic_values(config::dynamic_layer::cluster_default)
                           : std::map<std::string, std::string>{};
            for (const auto& p : config::broker_properties()) {
                if (!wanted(res.configuration_keys, p.name)) {
                    continue;
                }
                if (cluster_default) {
                    // The "" resource lists only the cluster-wide dynamic defaults (Kafka).
                    auto it = dyn.find(std::string(p.name));
                    if (it == dyn.end()) {
                        continue;
                    }
                    config::described_value d{
                        it->second, config::config_source::dynamic_default_broker, {}};
                    r.configs.push_back(entry(p, d, synonyms, docs, p.needs_restart));
                    continue;
                }
                r.configs.push_back(
                    entry(p, svc.config.describe(p, synonyms), synonyms, docs, p.needs_restart));
            }
            continue;
        }
        if (res.resource_type == resource_group) {
            if (res.resource_name.empty()) {
                r.error_code = code(error_code::invalid_request);
                r.error_message = "Group name must not be empty";
                continue;
            }
            // Kafka answers for any group id, existing or not: every key but its internal ones
            // (those only when set), the overrides over the broker's defaults.
            auto it = snap->group_configs.find(res.resource_name);
            const auto& overrides =
                it == snap->group_configs.end() ? config::group_overrides{} : it->second;
            for (const auto& g : config::group_properties()) {
                if ((!g.internal || overrides.contains(std::string(g.prop.name))) &&
                    wanted(res.configuration_keys, g.prop.name)) {
                    auto d = config::describe_group_key(svc.config, g, overrides, synonyms);
                    r.configs.push_back(entry(g.prop, d, synonyms, docs, false));
                }
            }
            continue;
        }
        if (res.resource_type == resource_broker_logger) {
            // Logger levels are not dynamic yet: an empty list, as for a broker with no loggers.
            continue;
        }
        r.error_code = code(error_code::invalid_request);
        r.error_message = "Unsupported resource type";
    }
    co_return resp;
}

}  // namespace

handler_result handle_describe_configs(request_ctx& ctx) {
    return typed_handler<protocol::describe_configs_request, response, run>(ctx);
}

}  // namespace spool::broker::handlers
