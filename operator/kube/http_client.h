#pragma once

// kube::client over HTTPS with cpprestsdk.
//
// Lifecycle: built from a kube::config; cancel() aborts in-flight requests at shutdown.
// Threading: every method may be called from any thread; cpprestsdk runs the I/O on its own
// thread pool and each call blocks its caller until the response (or each watch line) arrives.
// Retries: idempotent calls retry transport errors, 429 and 5xx with capped exponential backoff
// (4 attempts, 100 ms to 2 s); 4xx answers are returned to the caller at once.

#include "operator/kube/client.h"
#include "operator/kube/config.h"

#include <memory>

namespace spool::op::kube {

class http_client final : public client {
public:
    explicit http_client(config cfg);
    ~http_client() override;

    result<json> get(const resource_kind& kind, std::string_view ns,
                     std::string_view name) override;
    result<list_result> list(const resource_kind& kind, std::string_view ns,
                             const list_options& options = {}) override;
    result<std::string> watch(const resource_kind& kind, std::string_view ns,
                              const list_options& options, const std::string& resource_version,
                              int timeout_seconds,
                              const std::function<bool(const watch_event&)>& on_event) override;
    result<json> apply(const resource_kind& kind, std::string_view ns, std::string_view name,
                       const json& object, bool force = true) override;
    result<json> create(const resource_kind& kind, std::string_view ns,
                        const json& object) override;
    result<json> replace(const resource_kind& kind, std::string_view ns, std::string_view name,
                         const json& object) override;
    result<json> replace_status(const resource_kind& kind, std::string_view ns,
                                std::string_view name, const json& object) override;
    result<json> merge_patch(const resource_kind& kind, std::string_view ns, std::string_view name,
                             const json& patch) override;
    result<json> remove(const resource_kind& kind, std::string_view ns, std::string_view name,
                        std::string_view uid = {}) override;
    result<json> remove(const resource_kind& kind, std::string_view ns, std::string_view name,
                        const delete_options& options) override;
    void cancel() override;

    // Server-side apply of a YAML document as is (the CRDs compiled into the binary).
    result<json> apply_yaml(const resource_kind& kind, std::string_view ns, std::string_view name,
                            const std::string& yaml);

    // GET of a raw path (e.g. "/readyz"), for health checks. Returns the body text.
    result<std::string> get_raw(const std::string& path);

private:
    struct impl;
    std::unique_ptr<impl> _impl;
};

}  // namespace spool::op::kube
