#include "operator/reconcilers/secret_io.h"

#include "operator/builders/common.h"
#include "operator/kube/config.h"

#include <fmt/format.h>

namespace spool::op::reconcilers {

result<stored_secret> read_secret(kube::client& api, const std::string& ns,
                                  const std::string& name) {
    auto got = api.get(kube::kinds::secret, ns, name);
    if (!got) {
        if (got.error().is_not_found()) {
            return stored_secret{};
        }
        auto e = got.error();
        e.message = fmt::format("read Secret {}: {}", name, e.message);
        return e;
    }
    stored_secret out;
    out.exists = true;
    out.annotations = api::parse_meta(got.value()).annotations;
    if (const json* data = find(got.value(), "data"); data && data->is_object()) {
        for (const auto& [k, v] : data->as_object()) {
            auto decoded = kube::base64_decode(v.as_string());
            if (decoded) {
                out.data[k] = decoded.value();
            }
        }
    }
    return out;
}

result<void> write_secret(kube::client& api, const api::cluster& c, const std::string& name,
                          const stored_secret& old, const data_map& data) {
    if (old.exists && old.data == data) {
        return ok();
    }
    json encoded = json::object();
    for (const auto& [k, v] : data) {
        encoded[k] = str(kube::base64_encode(v));
    }
    json manifest = obj({{"apiVersion", str("v1")},
                         {"kind", str("Secret")},
                         {"metadata", builders::object_metadata(c, name)},
                         {"type", str("Opaque")},
                         {"data", encoded}});
    auto r = api.apply(kube::kinds::secret, c.meta.namespace_, name, manifest, true);
    if (!r) {
        auto e = r.error();
        e.message = fmt::format("apply Secret {}: {}", name, e.message);
        return e;
    }
    return ok();
}

}  // namespace spool::op::reconcilers
