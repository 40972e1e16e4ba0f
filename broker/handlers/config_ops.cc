#include "broker/handlers/config_ops.h"

#include "broker/cluster/replica_sync.h"
#include "broker/config/group_config.h"
#include "broker/config/listener_keys.h"
#include "broker/handlers/topic_ops.h"
#include "broker/metadata/errc.h"
#include "common/log.h"

#include <fmt/format.h>

namespace spool::broker::handlers {

using protocol::error_code;

namespace {

// "" is the cluster-wide default, the node id this broker; anything else is not ours.
std::optional<config::dynamic_layer> broker_layer(const services& svc, const std::string& name) {
    if (name.empty()) {
        return config::dynamic_layer::cluster_default;
    }
    if (name == std::to_string(svc.node_id)) {
        return config::dynamic_layer::this_broker;
    }
    return std::nullopt;
}

// A group's configs as a whole: Kafka's GroupConfig.validate, then the store; every broker reads
// them from its snapshot where it uses them (nothing to apply here).
boost::asio::awaitable<config_op_result> replace_group_configs(
    services& svc, std::string name, std::map<std::string, std::string> configs,
    bool validate_only) {
    config_op_result out;
    if (name.empty()) {
        out.error = error_code::invalid_request;
        out.message = "Default group resources are not allowed.";
        co_return out;
    }
    if (auto err = config::validate_group_configs(svc.config, configs); !err.empty()) {
        out.error = error_code::invalid_config;
        out.message = std::move(err);
        co_return out;
    }
    if (validate_only) {
        co_return out;
    }
    auto set = svc.store.set_group_configs(name, std::move(configs));
    if (auto r = co_await std::move(set); !r) {
        auto failed = from_store(r.error());
        out.error = failed.error;
        out.message = failed.message;
    }
    co_return out;
}

}  // namespace

std::map<std::string, std::string> current_dynamic_configs(services& svc, int8_t type,
                                                           const std::string& name,
                                                           config_op_result& error) {
    auto snap = svc.store.snapshot();
    if (type == resource_topic) {
        const auto* t = snap->find(name);
        if (t == nullptr) {
            error.error = error_code::unknown_topic_or_partition;
            return {};
        }
        return {t->configs.begin(), t->configs.end()};
    }
    if (type == resource_group) {
        if (name.empty()) {
            error.error = error_code::invalid_request;
            error.message = "Default group resources are not allowed.";
            return {};
        }
        // A group need not exist: Kafka keeps configs for groups not created yet.
        auto it = snap->group_configs.find(name);
        return it == snap->group_configs.end() ? std::map<std::string, std::string>{} : it->second;
    }
    if (type == resource_broker) {
        if (!broker_layer(svc, name)) {
            error.error = error_code::invalid_request;
            error.message = fmt::format("Unexpected broker id '{}'", name);
            return {};
        }
        auto it = snap->broker_configs.find(name);
        return it == snap->broker_configs.end() ? std::map<std::string, std::string>{} : it->second;
    }
    error.error = error_code::invalid_request;
    error.message = fmt::format("Unsupported resource type {}", type);
    return {};
}

boost::asio::awaitable<config_op_result> replace_dynamic_configs(
    services& svc, int8_t type, std::string name, std::map<std::string, std::string> configs,
    bool validate_only) {
    config_op_result out;
    if (type == resource_topic) {
        auto snap = svc.store.snapshot();
        if (snap->find(name) == nullptr) {
            out.error = error_code::unknown_topic_or_partition;
            co_return out;
        }
        for (const auto& [k, v] : configs) {
            std::string err = config::validate_topic_override(k, v);
            if (!err.empty()) {
                out.error = error_code::invalid_config;
                out.message = err;
                co_return out;
            }
        }
        if (validate_only) {
            co_return out;
        }
        auto set = svc.store.set_topic_configs(name, {configs.begin(), configs.end()});
        if (auto r = co_await std::move(set); !r) {
            auto failed = from_store(r.error());
            out.error = failed.error;
            out.message = failed.message;
            co_return out;
        }
        auto now = svc.store.snapshot();
        if (const auto* t = now->find(name)) {
            co_await svc.partitions.update_topic_config(*t);
        }
        co_return out;
    }
    if (type == resource_group) {
        co_return co_await replace_group_configs(svc, std::move(name), std::move(configs),
                                                 validate_only);
    }
    if (type != resource_broker) {
        out.error = error_code::invalid_request;
        out.message = fmt::format("Unsupported resource type {}", type);
        co_return out;
    }
    auto layer = broker_layer(svc, name);
    if (!layer) {
        out.error = error_code::invalid_request;
        out.message = fmt::format("Unexpected broker id '{}'", name);
        co_return out;
    }
    for (const auto& [k, v] : configs) {
        const auto* p = config::find_broker_property(k);
        if (p == nullptr) {
            p = config::find_listener_property(k);
        }
        if (p == nullptr) {
            out.error = error_code::invalid_config;
            out.message = fmt::format("unknown configuration key '{}'", k);
            co_return out;
        }
        // Kafka's DynamicBrokerConfig.validateConfigs answers these with INVALID_REQUEST.
        if (p->needs_restart) {
            out.error = error_code::invalid_request;
            out.message = fmt::format("Cannot update these configs dynamically: Set({})", k);
            co_return out;
        }
        if (*layer == config::dynamic_layer::cluster_default && config::per_broker_only(k)) {
            out.error = error_code::invalid_request;
            out.message = fmt::format(
                "Cannot update these configs at default cluster level, broker id must be "
                "specified: Set({})",
                k);
            co_return out;
        }
        auto parsed = config::parse_value(*p, v);
        if (!parsed.ok()) {
            out.error = error_code::invalid_config;
            out.message = parsed.error;
            co_return out;
        }
    }
    if (validate_only) {
        co_return out;
    }
    auto set = svc.store.set_broker_configs(name, configs);
    if (auto r = co_await std::move(set); !r) {
        auto failed = from_store(r.error());
        out.error = failed.error;
        out.message = failed.message;
        co_return out;
    }
    cluster::apply_dynamic_broker_configs(svc.config, *layer, configs);
    // Topic defaults may have changed with the broker keys: re-resolve every topic's logs.
    auto snap = svc.store.snapshot();
    for (const auto& [tn, t] : snap->topics) {
        co_await svc.partitions.update_topic_config(t);
    }
    log::get("kafka")->info("dynamic broker configs for '{}' set to {} keys", name, configs.size());
    co_return out;
}

}  // namespace spool::broker::handlers
