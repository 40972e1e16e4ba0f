#pragma once

// Expected-style results for hot paths: a value or a std::error_code, never an exception.
// Each module declares its own error enum and std::error_category; only the Kafka handlers
// translate those into Kafka error numbers.

#include <boost/outcome/std_result.hpp>
#include <boost/outcome/try.hpp>

#include <system_error>

namespace spool {

namespace outcome = boost::outcome_v2;

template <class T>
using result = outcome::std_result<T>;

inline auto success() { return outcome::success(); }

}  // namespace spool

// SPOOL_TRY(x, expr): declares x from expr's value (Boost 1.74 takes no "auto") or returns its error from the caller.
#define SPOOL_TRY BOOST_OUTCOME_TRY
