#pragma once

// Errors across the operator carry the text a user needs in a status condition, so they are a
// small struct rather than a bare error code.

#include <boost/outcome/basic_result.hpp>
#include <boost/outcome/policy/terminate.hpp>
#include <boost/outcome/try.hpp>

#include <string>

namespace spool::op {

struct error {
    // HTTP status for API errors (404, 409, 410, 403...), 0 for transport and local errors.
    int http_status = 0;
    // A CamelCase reason usable in a condition (e.g. "Conflict", "Unreachable", "InvalidSpec").
    std::string reason;
    // The real error text, shown to the user.
    std::string message;
    // Whether retrying later may succeed (transport errors, 409, 429, 5xx).
    bool transient = true;

    bool is_not_found() const { return http_status == 404; }
    bool is_conflict() const { return http_status == 409; }
    bool is_gone() const { return http_status == 410; }
};

inline error make_error(std::string reason, std::string message, bool transient = true) {
    return error{0, std::move(reason), std::move(message), transient};
}

template <class T>
using result = boost::outcome_v2::basic_result<T, error, boost::outcome_v2::policy::terminate>;

inline auto ok() {
    return boost::outcome_v2::success();
}

}  // namespace spool::op

// SPOOL_OP_TRY_ASSIGN(lhs, expr): assigns expr's value to lhs or returns its error.
#define SPOOL_OP_TRY_ASSIGN(lhs, expr)          \
    do {                                        \
        auto&& _spool_r = (expr);               \
        if (!_spool_r) {                        \
            return std::move(_spool_r).error(); \
        }                                       \
        lhs = std::move(_spool_r).value();      \
    } while (0)
