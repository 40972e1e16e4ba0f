#include "common/http/router.h"

#include <algorithm>

namespace spool::http {

namespace {

bool is_capture(std::string_view segment) {
    return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

std::optional<std::string> percent_decode(std::string_view in) {
    std::string out;
    out.reserve(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i] != '%') {
            out.push_back(in[i]);
            continue;
        }
        if (i + 2 >= in.size())
            return std::nullopt;
        int hi = hex_value(in[i + 1]);
        int lo = hex_value(in[i + 2]);
        if (hi < 0 || lo < 0)
            return std::nullopt;
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

std::string allow_header(std::vector<verb> methods) {
    std::sort(methods.begin(), methods.end());
    methods.erase(std::unique(methods.begin(), methods.end()), methods.end());
    std::string out;
    for (verb m : methods) {
        if (!out.empty())
            out += ", ";
        out += std::string(beast_http::to_string(m));
    }
    return out;
}

}  // namespace

std::optional<std::string_view> path_params::get(std::string_view name) const {
    for (const auto& [key, value] : _items) {
        if (key == name)
            return value;
    }
    return std::nullopt;
}

std::optional<std::vector<std::string>> split_path(std::string_view path) {
    std::vector<std::string> segments;
    size_t pos = 0;
    while (pos < path.size()) {
        if (path[pos] == '/') {
            ++pos;
            continue;
        }
        size_t end = path.find('/', pos);
        if (end == std::string_view::npos)
            end = path.size();
        auto decoded = percent_decode(path.substr(pos, end - pos));
        if (!decoded)
            return std::nullopt;
        segments.push_back(std::move(*decoded));
        pos = end;
    }
    return segments;
}

router& router::add(verb method, std::string_view pattern, handler h) {
    std::vector<std::string> segments;
    size_t pos = 0;
    while (pos < pattern.size()) {
        if (pattern[pos] == '/') {
            ++pos;
            continue;
        }
        size_t end = pattern.find('/', pos);
        if (end == std::string_view::npos)
            end = pattern.size();
        segments.emplace_back(pattern.substr(pos, end - pos));
        pos = end;
    }
    bool duplicate = std::any_of(_routes.begin(), _routes.end(), [&](const route& r) {
        return r.method == method && r.segments == segments;
    });
    if (!duplicate)
        _routes.push_back(route{method, std::move(segments), std::move(h)});
    return *this;
}

response router::dispatch(const request& req) const {
    std::string_view target(req.target().data(), req.target().size());
    auto path = target.substr(0, target.find('?'));
    auto segments = split_path(path);
    if (!segments)
        return error_response(status::bad_request, "malformed percent-encoding in path");

    std::vector<verb> allowed;
    for (const route& r : _routes) {
        if (r.segments.size() != segments->size())
            continue;
        path_params params;
        bool matched = true;
        for (size_t i = 0; i < r.segments.size() && matched; ++i) {
            const std::string& want = r.segments[i];
            if (is_capture(want)) {
                if ((*segments)[i].empty())
                    matched = false;
                else
                    params.add(want.substr(1, want.size() - 2), (*segments)[i]);
            } else {
                matched = want == (*segments)[i];
            }
        }
        if (!matched)
            continue;
        if (r.method == req.method())
            return r.h(req, params);
        allowed.push_back(r.method);
    }
    if (allowed.empty()) {
        return error_response(status::not_found, "no such path: " + std::string(path));
    }
    auto res =
        error_response(status::method_not_allowed, std::string(req.method_string()) +
                                                       " is not allowed on " + std::string(path));
    res.set(beast_http::field::allow, allow_header(std::move(allowed)));
    return res;
}

}  // namespace spool::http
