#pragma once

// Request and response types of the embedded HTTP server, and the few response builders every
// endpoint uses. Every error body has one shape so that clients (the operator, curl in a
// runbook) parse a single format:
//
//     {"error": "<human readable reason>", "status": <HTTP status code>}
//
// Threading: free functions, no state.

#include <boost/beast/http.hpp>

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace spool::http {

namespace beast_http = boost::beast::http;

using request = beast_http::request<beast_http::string_body>;
using response = beast_http::response<beast_http::string_body>;
using status = beast_http::status;
using verb = beast_http::verb;

// A response whose body is the serialized JSON value (application/json).
response json_response(status code, const nlohmann::json& body);

// A response with the JSON error body drawn above.
response error_response(status code, std::string_view message);

// A response with an arbitrary body and content type (e.g. the Prometheus text format).
response text_response(status code, std::string body, std::string_view content_type);

}  // namespace spool::http
