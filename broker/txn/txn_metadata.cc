#include "broker/txn/txn_metadata.h"

#include <array>

namespace spool::broker::txn {

namespace {

constexpr std::array<std::string_view, 8> names = {
    "Empty",          "Ongoing",       "PrepareCommit", "PrepareAbort",
    "CompleteCommit", "CompleteAbort", "Dead",          "PrepareEpochFence"};

}  // namespace

std::string_view state_name(txn_state s) noexcept {
    auto i = static_cast<size_t>(s);
    return i < names.size() ? names[i] : std::string_view("Unknown");
}

std::optional<txn_state> state_from_name(std::string_view name) noexcept {
    for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == name) {
            return static_cast<txn_state>(i);
        }
    }
    return std::nullopt;
}

}  // namespace spool::broker::txn
