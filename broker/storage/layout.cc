#include "broker/storage/layout.h"

#include <charconv>
#include <cstdio>

namespace spool::broker::storage::layout {

std::string offset_name(model::offset base) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%020lld", static_cast<long long>(base.value()));
    return buf;
}

std::filesystem::path segment_path(const std::filesystem::path& dir, model::offset base,
                                   std::string_view suffix) {
    std::string name = offset_name(base);
    name.append(suffix);
    return dir / name;
}

std::optional<model::offset> parse_offset_name(std::string_view filename, std::string_view suffix) {
    if (filename.size() != 20 + suffix.size() || !filename.ends_with(suffix)) {
        return std::nullopt;
    }
    int64_t v = 0;
    auto digits = filename.substr(0, 20);
    for (char c : digits) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
    }
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc{} || p != digits.data() + digits.size()) {
        return std::nullopt;
    }
    return model::offset(v);
}

std::optional<model::topic_partition> parse_partition_dir(std::string_view name) {
    if (name.ends_with(delete_dir_suffix)) {
        return std::nullopt;
    }
    auto dash = name.rfind('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 == name.size()) {
        return std::nullopt;
    }
    auto num = name.substr(dash + 1);
    int32_t p = 0;
    auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), p);
    if (ec != std::errc{} || ptr != num.data() + num.size() || p < 0) {
        return std::nullopt;
    }
    return model::topic_partition{std::string(name.substr(0, dash)), model::partition_id(p)};
}

}  // namespace spool::broker::storage::layout
