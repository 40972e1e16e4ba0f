#pragma once

// The cluster's ACL bindings, immutable once built, indexed for the authorizer's hot path: per
// resource type the literal bindings by name (the "*" ones apart) and the prefixed ones by
// prefix, so a check looks at the bindings that can apply to one resource and nothing else.
// A store builds one whenever the bindings change and hands it out inside its snapshots
// (cluster_state::acls), so every shard reads the same index without a lock.
//
// Threading: immutable after construction; share it freely.

#include "broker/security/acl.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace spool::broker::security {

class acl_index {
public:
    acl_index() = default;
    // Duplicates collapse (Kafka keeps a binding once however often it is created).
    explicit acl_index(std::vector<acl_binding> bindings);
    // The sections point into _bindings: the index lives where it was built (behind a
    // shared_ptr).
    acl_index(const acl_index&) = delete;
    acl_index& operator=(const acl_index&) = delete;

    // Every binding, sorted (acl_binding's order).
    const std::vector<acl_binding>& bindings() const { return _bindings; }
    size_t size() const { return _bindings.size(); }
    bool empty() const { return _bindings.empty(); }
    bool contains(const acl_binding& b) const;

    // Calls f(binding) for each binding whose resource pattern applies to (type, name): literal
    // ones named `name` or "*", prefixed ones whose prefix starts `name`. Stops early when f
    // returns false. Allocates nothing.
    template <class F>
    void for_each_applicable(resource_type type, std::string_view name, F&& f) const;

private:
    struct section {
        std::map<std::string, std::vector<const acl_binding*>, std::less<>> literal;
        std::vector<const acl_binding*> wildcard;  // literal "*"
        std::map<std::string, std::vector<const acl_binding*>, std::less<>> prefixed;
        size_t longest_prefix = 0;
    };
    const section* find_section(resource_type type) const;

    std::vector<acl_binding> _bindings;
    // By resource type code (topic .. user); the pointers point into _bindings.
    std::array<section, 8> _sections;
};

using acl_snapshot = std::shared_ptr<const acl_index>;

// A new index with `added` joined to (or `removed` taken out of) `current`'s bindings; `current`
// itself when that changes nothing, so an unchanged state keeps sharing its index.
acl_snapshot with_bindings(const acl_snapshot& current, const std::vector<acl_binding>& added);
acl_snapshot without_bindings(const acl_snapshot& current, const std::vector<acl_binding>& removed);

template <class F>
void acl_index::for_each_applicable(resource_type type, std::string_view name, F&& f) const {
    const section* s = find_section(type);
    if (s == nullptr) {
        return;
    }
    auto each = [&f](const std::vector<const acl_binding*>& list) {
        for (const auto* b : list) {
            if (!f(*b)) {
                return false;
            }
        }
        return true;
    };
    if (auto it = s->literal.find(name); it != s->literal.end() && !each(it->second)) {
        return;
    }
    if (!each(s->wildcard)) {
        return;
    }
    const size_t longest = std::min(name.size(), s->longest_prefix);
    for (size_t len = 1; len <= longest && !s->prefixed.empty(); ++len) {
        if (auto it = s->prefixed.find(name.substr(0, len));
            it != s->prefixed.end() && !each(it->second)) {
            return;
        }
    }
}

}  // namespace spool::broker::security
