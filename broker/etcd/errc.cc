#include "broker/etcd/client.h"

#include <string>

namespace spool::broker::etcd {
namespace {

class category final : public std::error_category {
public:
    const char* name() const noexcept override { return "spool.etcd"; }
    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
            case errc::ok:
                return "ok";
            case errc::unavailable:
                return "etcd unavailable (no endpoint could be reached)";
            case errc::timed_out:
                return "etcd request timed out";
            case errc::compacted:
                return "etcd revision compacted";
            case errc::lease_not_found:
                return "etcd lease not found (expired or revoked)";
            case errc::bad_response:
                return "etcd answered something this client cannot parse";
            case errc::request_failed:
                return "etcd refused the request";
            case errc::cancelled:
                return "etcd request cancelled";
        }
        return "unknown etcd error " + std::to_string(ev);
    }
};

}  // namespace

const std::error_category& error_category() noexcept {
    static const category instance;
    return instance;
}

}  // namespace spool::broker::etcd
