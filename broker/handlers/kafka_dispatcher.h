#pragma once

// The Kafka request dispatcher: parses the request header, checks the API and version against
// the supported-API table, and runs the handler. Anything malformed (a header that does not
// parse, an unknown API, an unsupported version, a body that does not decode) closes the
// connection and is counted, as Kafka does; only ApiVersions answers unsupported versions.
//
// Threading: stateless beyond `services`; runs on the connection's shard.

#include "broker/handlers/services.h"
#include "broker/net/dispatcher.h"

namespace spool::broker::handlers {

class kafka_dispatcher final : public net::request_dispatcher {
public:
    explicit kafka_dispatcher(services& svc) : _svc(svc) {}
    boost::asio::awaitable<net::handled> dispatch(net::request_context& ctx) override;

private:
    services& _svc;
};

}  // namespace spool::broker::handlers
