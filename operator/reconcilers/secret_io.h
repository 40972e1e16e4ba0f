#pragma once

// Reading and writing the Secrets the operator keeps for a Cluster (certificates, CAs): decoded
// data in, server-side apply out, written only when the data changed.

#include "operator/api/cluster.h"
#include "operator/api/error.h"
#include "operator/kube/client.h"

#include <map>
#include <string>

namespace spool::op::reconcilers {

using data_map = std::map<std::string, std::string>;

// A Secret as it is now: its decoded data and annotations; exists is false when there is none.
struct stored_secret {
    bool exists = false;
    data_map data;
    std::map<std::string, std::string> annotations;
};

result<stored_secret> read_secret(kube::client& api, const std::string& ns,
                                  const std::string& name);

// Writes the Secret (server-side apply, owned by the Cluster) when its data differs from `old`.
result<void> write_secret(kube::client& api, const api::cluster& c, const std::string& name,
                          const stored_secret& old, const data_map& data);

}  // namespace spool::op::reconcilers
