#include "operator/builders/manifests.h"

#include "operator/builders/config_map.h"
#include "operator/builders/pdb.h"
#include "operator/builders/services.h"
#include "operator/builders/statefulset.h"

namespace spool::op::builders {

std::vector<json> build_all(const api::cluster& c) {
    return {build_config_map(c), build_headless_service(c), build_client_service(c),
            build_statefulset(c), build_pdb(c)};
}

}  // namespace spool::op::builders
