#pragma once

// Shared by AlterConfigs and IncrementalAlterConfigs: validate a resource's complete new set of
// dynamic configs, persist it in the metadata store, and apply it (topic logs, broker config).

#include "broker/handlers/authz.h"
#include "broker/handlers/services.h"
#include "broker/runtime/asio.h"
#include "protocol/errors.h"

#include <map>
#include <optional>
#include <string>

namespace spool::broker::handlers {

// Kafka's ConfigResource.Type numbers.
inline constexpr int8_t resource_topic = 2;
inline constexpr int8_t resource_broker = 4;
inline constexpr int8_t resource_broker_logger = 8;
inline constexpr int8_t resource_group = 32;

// Kafka's config authorization: `op` (DescribeConfigs or AlterConfigs) on the topic or the
// group, or on the cluster for a broker or broker logger resource; the error that refuses it, or
// none. Other resource types are left to the handler's own checks.
inline protocol::error_code configs_denied(const request_authz& authz, security::acl_operation op,
                                           int8_t resource_type, std::string_view name) {
    if (resource_type == resource_topic) {
        return authz.topic(op, name) ? protocol::error_code::none
                                     : protocol::error_code::topic_authorization_failed;
    }
    if (resource_type == resource_group) {
        return authz.group(op, name) ? protocol::error_code::none
                                     : protocol::error_code::group_authorization_failed;
    }
    if (resource_type == resource_broker || resource_type == resource_broker_logger) {
        return authz.cluster(op) ? protocol::error_code::none
                                 : protocol::error_code::cluster_authorization_failed;
    }
    return protocol::error_code::none;
}

struct config_op_result {
    protocol::error_code error = protocol::error_code::none;
    std::optional<std::string> message;
};

// The current dynamic configs of a resource (topic overrides, a broker entity's or a group's).
std::map<std::string, std::string> current_dynamic_configs(services& svc, int8_t type,
                                                           const std::string& name,
                                                           config_op_result& error);

boost::asio::awaitable<config_op_result> replace_dynamic_configs(
    services& svc, int8_t type, std::string name, std::map<std::string, std::string> configs,
    bool validate_only);

}  // namespace spool::broker::handlers
