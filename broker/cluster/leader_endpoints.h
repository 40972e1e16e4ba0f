#pragma once

// Where this broker's replica fetchers reach another broker: the endpoint of its registration in
// the current metadata snapshot whose listener is inter.broker.listener.name, else its first
// advertised endpoint (the one clients are told first). Read at each connect, so a broker that
// restarted on another address is found there.
//
// Threading: the resolver may be called on any thread (store::snapshot() is).

#include "broker/metadata/store.h"
#include "broker/replication/replica_fetcher.h"

#include <string>

namespace spool::broker::cluster {

// listener: inter.broker.listener.name ("" when unset).
replication::endpoint_resolver leader_endpoints(const metadata::store& store, std::string listener);

// The endpoint picked from one registration (exposed for its unit test).
std::optional<replication::leader_endpoint> inter_broker_endpoint(
    const metadata::broker_registration& broker, const std::string& listener);

}  // namespace spool::broker::cluster
