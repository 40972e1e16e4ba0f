#pragma once

// Broker property names a Cluster may set in spec.config (Kafka's names). A copy of the broker's
// property table would be better (broker/config owns it); until that table is a library the
// operator can link without depending upward, this list is the operator's allow-list.

#include <string_view>

namespace spool::op::api {

bool is_known_broker_config_key(std::string_view key);

// Keys the operator derives from the Cluster itself (listeners, ids, directories); a user value
// would break the StatefulSet's assumptions, so validation rejects them.
bool is_operator_owned_broker_config_key(std::string_view key);

}  // namespace spool::op::api
