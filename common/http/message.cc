#include "common/http/message.h"

#include <nlohmann/json.hpp>

namespace spool::http {

response json_response(status code, const nlohmann::json& body) {
    // Replace invalid UTF-8 (e.g. a topic name taken from a broken client) rather than throw.
    return text_response(code, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                         "application/json");
}

response error_response(status code, std::string_view message) {
    return json_response(code,
                         nlohmann::json{{"error", message}, {"status", static_cast<int>(code)}});
}

response text_response(status code, std::string body, std::string_view content_type) {
    response res{code, 11};
    res.set(beast_http::field::content_type,
            boost::beast::string_view(content_type.data(), content_type.size()));
    res.set(beast_http::field::cache_control, "no-store");
    res.body() = std::move(body);
    return res;
}

}  // namespace spool::http
