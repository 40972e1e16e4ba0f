#include "broker/security/acl_index.h"

#include <algorithm>

namespace spool::broker::security {

acl_index::acl_index(std::vector<acl_binding> bindings) : _bindings(std::move(bindings)) {
    std::sort(_bindings.begin(), _bindings.end());
    _bindings.erase(std::unique(_bindings.begin(), _bindings.end()), _bindings.end());
    for (const auto& b : _bindings) {
        auto code = static_cast<size_t>(b.type);
        if (code >= _sections.size()) {
            continue;  // not a concrete resource type: applies to nothing
        }
        auto& s = _sections[code];
        if (b.pattern == pattern_type::prefixed) {
            s.prefixed[b.name].push_back(&b);
            s.longest_prefix = std::max(s.longest_prefix, b.name.size());
        } else if (b.pattern == pattern_type::literal) {
            if (b.name == wildcard_resource) {
                s.wildcard.push_back(&b);
            } else {
                s.literal[b.name].push_back(&b);
            }
        }
    }
}

bool acl_index::contains(const acl_binding& b) const {
    return std::binary_search(_bindings.begin(), _bindings.end(), b);
}

const acl_index::section* acl_index::find_section(resource_type type) const {
    auto code = static_cast<size_t>(type);
    return code < _sections.size() ? &_sections[code] : nullptr;
}

acl_snapshot with_bindings(const acl_snapshot& current, const std::vector<acl_binding>& added) {
    bool changes = std::any_of(added.begin(), added.end(),
                               [&](const acl_binding& b) { return !current->contains(b); });
    if (!changes) {
        return current;
    }
    auto all = current->bindings();
    all.insert(all.end(), added.begin(), added.end());
    return std::make_shared<const acl_index>(std::move(all));
}

acl_snapshot without_bindings(const acl_snapshot& current,
                              const std::vector<acl_binding>& removed) {
    std::vector<acl_binding> gone = removed;
    std::sort(gone.begin(), gone.end());
    std::vector<acl_binding> kept;
    kept.reserve(current->size());
    for (const auto& b : current->bindings()) {
        if (!std::binary_search(gone.begin(), gone.end(), b)) {
            kept.push_back(b);
        }
    }
    if (kept.size() == current->size()) {
        return current;
    }
    return std::make_shared<const acl_index>(std::move(kept));
}

}  // namespace spool::broker::security
