#pragma once

// Kafka's per-listener broker keys (KIP-226): a security setting of one listener is written as
//
//     listener.name.<listener>.<key>               e.g.
//     listener.name.internal.sasl.enabled.mechanisms listener.name.<listener>.<mechanism>.<key>
//     e.g. listener.name.sasl_ssl.plain.sasl.jaas.config
//
// where <key> is a broker key of the property table (Kafka's DynamicBrokerConfig
// ListenerConfigRegex). Such keys, like Kafka's listener and SASL keys themselves, can only be
// set on one broker's resource, never as a cluster-wide default.
//
// Threading: pure functions over the immutable table; any thread.

#include "broker/config/property.h"

#include <string_view>

namespace spool::broker::config {

// The table key a per-listener key names, or nullptr when `name` is not one.
const property* find_listener_property(std::string_view name);

// Whether Kafka takes `name` only per broker ("Cannot update these configs at default cluster
// level, broker id must be specified"): per-listener keys and Kafka's listener, SSL and SASL
// keys.
bool per_broker_only(std::string_view name);

}  // namespace spool::broker::config
