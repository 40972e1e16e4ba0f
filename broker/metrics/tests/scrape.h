#pragma once

// Reads one sample from Prometheus text: the value on the line that starts with
// `series` followed by a space, e.g. series = R"(spool_broker_requests_total{api="fetch"})".

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace spool::broker::metrics::testing {

inline std::optional<double> sample(std::string_view text, std::string_view series) {
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
            line[series.size()] == ' ') {
            return std::stod(line.substr(series.size() + 1));
        }
    }
    return std::nullopt;
}

}  // namespace spool::broker::metrics::testing
