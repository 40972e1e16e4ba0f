#include "broker/config/property.h"
#include "common/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace spool::broker::config {

namespace {

parse_outcome failure(const property& p, std::string_view text, std::string_view why) {
    return {std::monostate{}, fmt::format("invalid value '{}' for '{}': {}", text, p.name, why)};
}

std::string bounds_text(const property& p) {
    auto num = [](double d) {
        return d == std::floor(d) && std::abs(d) < 1e18 ? fmt::format("{}", static_cast<int64_t>(d))
                                                        : fmt::format("{}", d);
    };
    if (p.min && p.max) {
        return fmt::format("must be between {} and {}", num(*p.min), num(*p.max));
    }
    if (p.min) {
        return fmt::format("must be at least {}", num(*p.min));
    }
    return fmt::format("must be at most {}", num(*p.max));
}

bool in_bounds(const property& p, double v) {
    return (!p.min || v >= *p.min) && (!p.max || v <= *p.max);
}

bool allowed(const property& p, std::string_view v) {
    return p.choices.empty() || std::find(p.choices.begin(), p.choices.end(), v) != p.choices.end();
}

std::string choices_text(const property& p) {
    return fmt::format("must be one of {}", fmt::join(p.choices, ", "));
}

}  // namespace

std::string_view type_name(property_type t) {
    switch (t) {
        case property_type::boolean:
            return "BOOLEAN";
        case property_type::int32:
            return "INT";
        case property_type::int64:
            return "LONG";
        case property_type::double_:
            return "DOUBLE";
        case property_type::string:
            return "STRING";
        case property_type::list:
            return "LIST";
        case property_type::password:
            return "PASSWORD";
    }
    return "UNKNOWN";
}

parse_outcome parse_value(const property& p, std::string_view raw) {
    std::string_view text = trim_blanks(raw);
    if (p.nullable && (text == "null" || text.empty()) && p.type != property_type::list &&
        p.type != property_type::string) {
        return {std::monostate{}, {}};
    }
    switch (p.type) {
        case property_type::boolean: {
            std::string lower(text);
            std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
            if (lower == "true") {
                return {true, {}};
            }
            if (lower == "false") {
                return {false, {}};
            }
            return failure(p, raw, "expected true or false");
        }
        case property_type::int32:
        case property_type::int64: {
            int64_t v = 0;
            auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) {
                return failure(p, raw,
                               p.type == property_type::int32 ? "expected an integer"
                                                              : "expected a long integer");
            }
            if (p.type == property_type::int32 && (v > std::numeric_limits<int32_t>::max() ||
                                                   v < std::numeric_limits<int32_t>::min())) {
                return failure(p, raw, "does not fit in a 32-bit integer");
            }
            if (!in_bounds(p, static_cast<double>(v))) {
                return failure(p, raw, bounds_text(p));
            }
            return {v, {}};
        }
        case property_type::double_: {
            double v = 0;
            auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() ||
                !std::isfinite(v)) {
                return failure(p, raw, "expected a number");
            }
            if (!in_bounds(p, v)) {
                return failure(p, raw, bounds_text(p));
            }
            return {v, {}};
        }
        case property_type::string:
        case property_type::password: {
            if (p.nullable && (text == "null" || text.empty())) {
                return {std::monostate{}, {}};
            }
            if (!allowed(p, text)) {
                return failure(p, raw, choices_text(p));
            }
            return {std::string(text), {}};
        }
        case property_type::list: {
            if (p.nullable && text == "null") {
                return {std::monostate{}, {}};
            }
            std::vector<std::string> items;
            size_t start = 0;
            while (start <= text.size() && !text.empty()) {
                size_t comma = text.find(',', start);
                std::string_view item = trim_blanks(
                    text.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                       : comma - start));
                if (item.empty()) {
                    return failure(p, raw, "empty list element");
                }
                if (!allowed(p, item)) {
                    return failure(p, raw, choices_text(p));
                }
                items.emplace_back(item);
                if (comma == std::string_view::npos) {
                    break;
                }
                start = comma + 1;
            }
            return {std::move(items), {}};
        }
    }
    return failure(p, raw, "unknown type");
}

std::optional<std::string> render_value(const value& v) {
    struct visitor {
        std::optional<std::string> operator()(std::monostate) const { return std::nullopt; }
        std::optional<std::string> operator()(bool b) const { return b ? "true" : "false"; }
        std::optional<std::string> operator()(int64_t i) const { return std::to_string(i); }
        std::optional<std::string> operator()(double d) const { return fmt::format("{}", d); }
        std::optional<std::string> operator()(const std::string& s) const { return s; }
        std::optional<std::string> operator()(const std::vector<std::string>& l) const {
            return fmt::format("{}", fmt::join(l, ","));
        }
    };
    return std::visit(visitor{}, v);
}

}  // namespace spool::broker::config
