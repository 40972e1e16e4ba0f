#pragma once

// Maps (method, path) to a handler. Patterns are literal segments and "{name}" captures, e.g.
// "/v1/topics/{name}"; a capture matches one non-empty, percent-decoded segment. The query
// string is not part of the match (handlers read it from the request target).
//
// Outcomes: a match calls the handler; a path that matches with another method answers 405
// with an Allow header listing the methods that would match; anything else answers 404. Both
// errors carry the JSON error body (common/http/message.h).
//
// Lifecycle and threading: build it fully, then hand it to the server; dispatch() is const
// and may be called from any thread, so handlers must be safe to call from the server's
// thread. Handlers run on the server's I/O thread and must not block for long: they hold up
// every other HTTP client (never the Kafka path, which has its own threads).

#include "common/http/message.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace spool::http {

// The captures of a matched pattern, in pattern order.
class path_params {
public:
    void add(std::string name, std::string value) {
        _items.emplace_back(std::move(name), std::move(value));
    }
    // The capture's value, or nullopt if the pattern has no capture of that name.
    std::optional<std::string_view> get(std::string_view name) const;

private:
    std::vector<std::pair<std::string, std::string>> _items;
};

using handler = std::function<response(const request&, const path_params&)>;

class router {
public:
    // Registers a handler. Later registrations for the same method and pattern are ignored
    // (first wins), so a route cannot be silently replaced.
    router& add(verb method, std::string_view pattern, handler h);

    // Answers a request: the handler's response or a 404/405 error response.
    response dispatch(const request& req) const;

private:
    struct route {
        verb method;
        std::vector<std::string> segments;  // "{name}" marks a capture
        handler h;
    };
    std::vector<route> _routes;
};

// Splits a path into segments, percent-decoding each; nullopt if the encoding is malformed.
std::optional<std::vector<std::string>> split_path(std::string_view path);

}  // namespace spool::http
