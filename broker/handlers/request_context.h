#pragma once

// What a handler sees of one request: the services, the parsed header, and the network
// context (ordering point). Handlers return the response body; the dispatcher encodes it.

#include "broker/handlers/request_memory.h"
#include "broker/handlers/services.h"
#include "broker/net/dispatcher.h"
#include "protocol/api/framing.h"

namespace spool::broker::handlers {

struct request_ctx {
    services& svc;
    net::request_context& net;
    const protocol::request_view& request;
    // A handler may switch this to no_response (acks=0) or close (acks=0 error).
    net::request_outcome outcome = net::request_outcome::respond;
    // Set by typed_handler when the response carries an error code anywhere (request metrics).
    bool response_error = false;
    // Decode, per-item work and response of this request (request_memory.h).
    request_memory memory;
    // The connection closes once the response is written (failed authentication).
    bool close_after_response = false;

    int16_t version() const { return request.version(); }
    const std::optional<std::string>& client_id() const { return request.header.client_id; }
};

}  // namespace spool::broker::handlers
