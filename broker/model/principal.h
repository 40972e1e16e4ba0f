#pragma once

// Who a connection is (Kafka's KafkaPrincipal): "User:ANONYMOUS" on a listener that does not
// authenticate, "User:<name>" after SASL, the mapped certificate subject after mTLS. The
// authorizer matches ACL bindings against to_string() ("<type>:<name>"), as Kafka does.

#include <string>

namespace spool::broker::model {

struct kafka_principal {
    std::string type = "User";
    std::string name = "ANONYMOUS";

    std::string to_string() const { return type + ":" + name; }
    bool anonymous() const { return type == "User" && name == "ANONYMOUS"; }
    friend bool operator==(const kafka_principal&, const kafka_principal&) = default;
};

}  // namespace spool::broker::model
