#include "protocol/messages/alter_configs.h"

#include "broker/config/group_config.h"
#include "broker/handlers/config_ops.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"
#include "protocol/messages/incremental_alter_configs.h"

#include <algorithm>

namespace spool::broker::handlers {

namespace {

using protocol::error_code;

// AlterConfigs replaces a resource's dynamic configs as a whole.
boost::asio::awaitable<protocol::alter_configs_response> run_alter(
    request_ctx& ctx, protocol::alter_configs_request& req) {
    protocol::alter_configs_response resp;
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    for (const auto& res : req.resources) {
        auto& r = resp.responses.emplace_back();
        r.resource_type = res.resource_type;
        r.resource_name = res.resource_name;
        if (auto denied = configs_denied(authz, security::acl_operation::alter_configs,
                                         res.resource_type, res.resource_name);
            denied != error_code::none) {
            r.error_code = code(denied);
            continue;
        }
        std::map<std::string, std::string> configs;
        for (const auto& c : res.configs) {
            if (c.value) {
                configs[c.name] = *c.value;
            }
        }
        auto out = co_await replace_dynamic_configs(ctx.svc, res.resource_type, res.resource_name,
                                                    std::move(configs), req.validate_only);
        r.error_code = code(out.error);
        r.error_message = out.message;
    }
    co_return resp;
}

// Kafka's OpType numbers.
constexpr int8_t op_set = 0;
constexpr int8_t op_delete = 1;
constexpr int8_t op_append = 2;
constexpr int8_t op_subtract = 3;

std::vector<std::string> split_list(const std::string& s) {
    std::vector<std::string> out;
    size_t start = 0;
    while (start < s.size()) {
        size_t comma = s.find(',', start);
        if (comma == std::string::npos) {
            comma = s.size();
        }
        if (comma > start) {
            out.push_back(s.substr(start, comma - start));
        }
        start = comma + 1;
    }
    return out;
}

std::string join_list(const std::vector<std::string>& l) {
    std::string out;
    for (const auto& s : l) {
        out += (out.empty() ? "" : ",") + s;
    }
    return out;
}

// The effective current value of a key, for APPEND/SUBTRACT on lists.
std::string effective(services& svc, int8_t type, const std::map<std::string, std::string>& cur,
                      const std::string& key) {
    if (auto it = cur.find(key); it != cur.end()) {
        return it->second;
    }
    if (type == resource_group) {
        if (const auto* g = config::find_group_property(key)) {
            return config::describe_group_key(svc.config, *g, {}, false).value.value_or("");
        }
        return {};
    }
    if (type == resource_topic) {
        if (const auto* p = config::find_topic_property(key)) {
            return svc.config.topic_default(*p).value.value_or("");
        }
        return {};
    }
    if (config::find_broker_property(key) != nullptr) {
        return config::render_value(svc.config.get(key)).value_or("");
    }
    return {};
}

boost::asio::awaitable<protocol::incremental_alter_configs_response> run_incremental(
    request_ctx& ctx, protocol::incremental_alter_configs_request& req) {
    protocol::incremental_alter_configs_response resp;
    auto snap = ctx.svc.store.snapshot();
    request_authz authz(ctx, *snap);
    for (const auto& res : req.resources) {
        auto& r = resp.responses.emplace_back();
        r.resource_type = res.resource_type;
        r.resource_name = res.resource_name;
        if (auto denied = configs_denied(authz, security::acl_operation::alter_configs,
                                         res.resource_type, res.resource_name);
            denied != error_code::none) {
            r.error_code = code(denied);
            continue;
        }
        config_op_result err;
        auto configs = current_dynamic_configs(ctx.svc, res.resource_type, res.resource_name, err);
        if (err.error != error_code::none) {
            r.error_code = code(err.error);
            r.error_message = err.message;
            continue;
        }
        bool failed = false;
        for (const auto& c : res.configs) {
            switch (c.config_operation) {
                case op_set:
                    if (!c.value) {
                        failed = true;
                        break;
                    }
                    configs[c.name] = *c.value;
                    break;
                case op_delete:
                    configs.erase(c.name);
                    break;
                case op_append:
                case op_subtract: {
                    auto list = split_list(effective(ctx.svc, res.resource_type, configs, c.name));
                    for (const auto& item : split_list(c.value.value_or(""))) {
                        auto it = std::find(list.begin(), list.end(), item);
                        if (c.config_operation == op_append && it == list.end()) {
                            list.push_back(item);
                        } else if (c.config_operation == op_subtract && it != list.end()) {
                            list.erase(it);
                        }
                    }
                    configs[c.name] = join_list(list);
                    break;
                }
                default:
                    failed = true;
            }
            if (failed) {
                r.error_code = code(error_code::invalid_request);
                r.error_message = "Invalid config operation for " + c.name;
                break;
            }
        }
        if (failed) {
            continue;
        }
        auto out = co_await replace_dynamic_configs(ctx.svc, res.resource_type, res.resource_name,
                                                    std::move(configs), req.validate_only);
        r.error_code = code(out.error);
        r.error_message = out.message;
    }
    co_return resp;
}

}  // namespace

handler_result handle_alter_configs(request_ctx& ctx) {
    return typed_handler<protocol::alter_configs_request, protocol::alter_configs_response,
                         run_alter>(ctx);
}

handler_result handle_incremental_alter_configs(request_ctx& ctx) {
    return typed_handler<protocol::incremental_alter_configs_request,
                         protocol::incremental_alter_configs_response, run_incremental>(ctx);
}

}  // namespace spool::broker::handlers
