#pragma once

// admin_client over the Kafka protocol, with the shared protocol library's generated codecs.
//
// One blocking TCP connection per admin_client (the reconciler creates one per pass, so nothing
// goes stale between passes). The first request is ApiVersions; every later request uses the
// highest version both sides support. Topic reads go to the bootstrap broker; writes go to the
// controller named in Metadata (Kafka answers NOT_CONTROLLER elsewhere), falling back to the
// bootstrap broker when it names none.
//
// With client_tls the connections are TLS (the operator's client certificate; the broker's
// certificate checked against the CA and the host name).
//
//   frame = int32 size | request header | body   (protocol/api/framing.h)

#include "operator/reconcilers/admin_client.h"

#include <chrono>
#include <memory>

namespace spool::op::reconcilers {

std::unique_ptr<admin_client_factory> make_kafka_admin_factory(
    std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace spool::op::reconcilers
