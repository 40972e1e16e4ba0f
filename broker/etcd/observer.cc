#include "broker/etcd/observer.h"

#include "broker/etcd/client.h"

namespace spool::broker::etcd {

std::string_view outcome_name(std::error_code outcome) noexcept {
    if (!outcome) {
        return "ok";
    }
    if (outcome.category() != error_category()) {
        return "error";
    }
    switch (static_cast<errc>(outcome.value())) {
        case errc::ok:
            return "ok";
        case errc::unavailable:
            return "unavailable";
        case errc::timed_out:
            return "timed_out";
        case errc::compacted:
            return "compacted";
        case errc::lease_not_found:
            return "lease_not_found";
        case errc::bad_response:
            return "bad_response";
        case errc::request_failed:
            return "request_failed";
        case errc::cancelled:
            return "cancelled";
    }
    return "error";
}

bool etcd_answered(std::error_code outcome) noexcept {
    return outcome != errc::unavailable && outcome != errc::timed_out && outcome != errc::cancelled;
}

}  // namespace spool::broker::etcd
