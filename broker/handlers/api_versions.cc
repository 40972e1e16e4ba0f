#include "protocol/messages/api_versions.h"

#include "broker/handlers/api_table.h"
#include "broker/handlers/handler_util.h"
#include "broker/handlers/handlers.h"

namespace spool::broker::handlers {

namespace {

protocol::api_versions_response full_list() {
    protocol::api_versions_response resp;
    for (const auto& e : supported_apis()) {
        resp.api_keys.push_back({static_cast<int16_t>(e.key), e.min_version, e.max_version, {}});
    }
    // No SupportedFeatures / FinalizedFeatures: without a finalized transaction.version the
    // Java 4.x producer stays on the classic transaction protocol.
    return resp;
}

boost::asio::awaitable<protocol::api_versions_response> run(request_ctx& ctx,
                                                            protocol::api_versions_request& req) {
    co_return full_list();
}

}  // namespace

handler_result handle_api_versions(request_ctx& ctx) {
    return typed_handler<protocol::api_versions_request, protocol::api_versions_response, run>(ctx);
}

net::handled unsupported_api_versions(int32_t correlation_id) {
    auto resp = full_list();
    resp.error_code = code(protocol::error_code::unsupported_version);
    auto enc = protocol::encode_response(correlation_id, 0, resp);
    net::handled h;
    h.response.buffer = std::move(enc.bytes);
    return h;
}

}  // namespace spool::broker::handlers
