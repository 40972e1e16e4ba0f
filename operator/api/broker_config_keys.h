#pragma once

// Broker property names a Cluster may set in spec.config (Kafka's names). The answer comes from
// the broker's own property table (broker/config, a leaf library with no broker runtime in it),
// so the operator's allow-list cannot drift from what spool-broker accepts.

#include <string>
#include <string_view>

namespace spool::op::api {

bool is_known_broker_config_key(std::string_view key);

// Why spool-broker would refuse `value` for the known broker key `key` at start (the broker's
// own parser: type, range, allowed values), or empty when it accepts it. Checked before a value
// reaches the StatefulSet, so that a typo never starts a roll whose first pod cannot start.
std::string broker_config_value_problem(std::string_view key, std::string_view value);

// Keys the operator derives from the Cluster itself (listeners, ids, directories); a user value
// would break the StatefulSet's assumptions, so validation rejects them.
bool is_operator_owned_broker_config_key(std::string_view key);

// Keys spec.security decides on a secured Cluster (TLS stores, SASL, authorizer, super users,
// any listener.name.* key): a user value would undo it.
bool is_security_owned_broker_config_key(std::string_view key);

}  // namespace spool::op::api
