#pragma once

// The operator's TLS identity toward one secured Cluster (PEM): the cluster CA bundle it
// verifies the brokers against and the client certificate it authenticates with (a super user,
// builders/security.h). Read from the <cluster>-operator-cert Secret the certificates step
// keeps.

#include <string>

namespace spool::op::reconcilers {

struct client_tls {
    std::string ca_pem;
    std::string cert_pem;
    std::string key_pem;
};

}  // namespace spool::op::reconcilers
