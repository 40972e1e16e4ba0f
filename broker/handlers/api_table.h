#pragma once

// The one table of Kafka APIs this broker serves: it drives dispatch, the version check and the
// ApiVersions response. Adding an API = one handler file + one row in api_table.cc.
//
// Versions are what the broker advertises. A request outside [min, max] closes the connection
// (Kafka's behaviour), except ApiVersions, which answers UNSUPPORTED_VERSION in v0 format.
// `accept_min` lets the broker advertise a lower version than it serves: librdkafka needs
// Produce advertised from v0 to enable compression (KAFKA-18659), but v0-2 are refused.
//
// Threading: immutable static data.

#include "broker/handlers/request_context.h"
#include "broker/metrics/request_probe.h"
#include "broker/runtime/asio.h"

#include <cstdint>
#include <span>

namespace spool::broker::handlers {

using handler_fn = boost::asio::awaitable<net::handled> (*)(request_ctx&);

struct api_entry {
    protocol::api_key key;
    int16_t min_version;  // advertised
    int16_t max_version;  // advertised
    int16_t accept_min;   // lowest version actually served
    handler_fn handler;
};

std::span<const api_entry> supported_apis();
// nullptr when the broker does not serve `key`.
const api_entry* find_supported(int16_t key);
// The metric label of every supported API: Kafka's name in snake_case ("Produce" ->
// "produce", "ApiVersions" -> "api_versions"), for metrics::request_probe.
std::span<const metrics::api_label> api_labels();

}  // namespace spool::broker::handlers
