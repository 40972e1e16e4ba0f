#include "operator/builders/manifests.h"

#include "operator/builders/config_map.h"
#include "operator/builders/network_policy.h"
#include "operator/builders/pdb.h"
#include "operator/builders/services.h"
#include "operator/builders/statefulset.h"

namespace spool::op::builders {

std::vector<json> build_all(const api::cluster& c, const std::string& operator_namespace) {
    std::vector<json> all = {build_config_map(c), build_headless_service(c),
                             build_client_service(c)};
    for (auto& s : build_external_services(c)) {
        all.push_back(std::move(s));
    }
    all.push_back(build_statefulset(c));
    all.push_back(build_pdb(c));
    if (c.spec.network_policy.enabled) {
        all.push_back(build_network_policy(c, operator_namespace));
    }
    return all;
}

}  // namespace spool::op::builders
