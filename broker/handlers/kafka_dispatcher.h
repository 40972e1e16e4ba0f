#pragma once

// The Kafka request dispatcher: parses the request header, checks the API and version against
// the supported-API table, and runs the handler. Anything malformed (a header that does not
// parse, an unknown API, an unsupported version, a body that does not decode) closes the
// connection and is counted, as Kafka does; only ApiVersions answers unsupported versions.
// On SASL listeners the SASL gate (sasl_session.h) comes first: before authentication only the
// SASL exchange is served.
//
// Every request is also timed into the request probe (when one is given): queue time from the
// frame's last byte read to this dispatcher starting it, latency from that read to the response
// being ready, and whether it failed (closed the connection or carried an error code). Requests
// without a parsable header or with an API the table lacks count under api="unknown".
//
// Threading: stateless beyond `services` and the probe (both safe from any shard); runs on the
// connection's shard.

#include "broker/handlers/services.h"
#include "broker/net/dispatcher.h"

namespace spool::broker::metrics {
class request_probe;
}  // namespace spool::broker::metrics

namespace spool::broker::handlers {

class kafka_dispatcher final : public net::request_dispatcher {
public:
    explicit kafka_dispatcher(services& svc, metrics::request_probe* requests = nullptr)
        : _svc(svc), _requests(requests) {}
    boost::asio::awaitable<net::handled> dispatch(net::request_context& ctx) override;

private:
    struct request_summary {
        int16_t api_key = -1;
        bool error = false;  // the response carries an error code
    };
    boost::asio::awaitable<net::handled> run(net::request_context& ctx, request_summary& summary);

    services& _svc;
    metrics::request_probe* _requests;
};

}  // namespace spool::broker::handlers
