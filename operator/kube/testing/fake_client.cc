#include "operator/kube/testing/fake_client.h"

#include <fmt/format.h>

#include <algorithm>

namespace spool::op::kube::testing {

namespace {

constexpr std::string_view fake_time = "2026-01-01T00:00:00Z";

error api_error(int status, std::string reason, std::string message) {
    // 409 and 5xx are worth retrying; 404/422 are answers.
    bool transient = status == 409 || status >= 500;
    return error{status, std::move(reason), std::move(message), transient};
}

error not_found(const resource_kind& kind, std::string_view name) {
    return api_error(404, "NotFound", fmt::format("{} \"{}\" not found", kind.plural, name));
}

error conflict(const resource_kind& kind, std::string_view name, std::string_view why) {
    return api_error(
        409, "Conflict",
        fmt::format("Operation cannot be fulfilled on {} \"{}\": {}", kind.plural, name, why));
}

// cpprestsdk's erase throws for a missing key.
void erase_field(json& object, const std::string& key) {
    if (object.is_object() && object.has_field(key)) {
        object.erase(key);
    }
}

json& metadata_of(json& object) {
    if (!object.has_field("metadata")) {
        object["metadata"] = json::object();
    }
    return object["metadata"];
}

// Everything but status and metadata: what a change to bumps metadata.generation.
json content_of(const json& object) {
    json copy = object;
    if (copy.is_object()) {
        erase_field(copy, "status");
        erase_field(copy, "metadata");
    }
    return copy;
}

// RFC 7386: objects merge key by key, null removes, anything else replaces.
json merge(const json& target, const json& patch) {
    if (!patch.is_object()) {
        return patch;
    }
    json out = target.is_object() ? target : json::object();
    for (const auto& [k, v] : patch.as_object()) {
        if (v.is_null()) {
            erase_field(out, k);
        } else {
            out[k] = merge(out.has_field(k) ? out.at(k) : json::null(), v);
        }
    }
    return out;
}

// Being deleted and no finalizer left: the API server removes the object.
bool released(const json& object) {
    const json* meta = find(object, "metadata");
    if (!meta || !find(*meta, "deletionTimestamp")) {
        return false;
    }
    const json* finalizers = find(*meta, "finalizers");
    return !finalizers || !finalizers->is_array() || finalizers->size() == 0;
}

bool labels_match(const json& object, const std::string& selector) {
    if (selector.empty()) {
        return true;
    }
    const json* meta = find(object, "metadata");
    auto labels = meta ? get_string_map(*meta, "labels") : std::map<std::string, std::string>{};
    size_t start = 0;
    while (start <= selector.size()) {
        size_t comma = selector.find(',', start);
        std::string term = selector.substr(start, comma - start);
        size_t eq = term.find('=');
        if (eq != std::string::npos) {
            std::string k = term.substr(0, eq), v = term.substr(eq + 1);
            if (!k.empty() && k.back() == '!') {
                k.pop_back();
                auto it = labels.find(k);
                if (it != labels.end() && it->second == v)
                    return false;
            } else {
                if (!v.empty() && v.front() == '=')  // "=="
                    v.erase(0, 1);
                auto it = labels.find(k);
                if (it == labels.end() || it->second != v)
                    return false;
            }
        } else if (!term.empty() && labels.find(term) == labels.end()) {
            return false;  // "key": exists
        }
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return true;
}

}  // namespace

fake_client::key fake_client::key_of(const resource_kind& kind, std::string_view ns,
                                     std::string_view name) {
    return {kind.plural, kind.namespaced ? std::string(ns) : std::string(), std::string(name)};
}

std::string fake_client::next_version() {
    return std::to_string(++_version);
}

std::optional<error> fake_client::take_failure(std::string_view verb, const resource_kind& kind) {
    if (_cancelled) {
        return make_error("Cancelled", "the client was cancelled");
    }
    for (auto it = _failures.begin(); it != _failures.end(); ++it) {
        if (it->verb == verb && (it->kind.empty() || it->kind == kind.kind)) {
            error e = it->e;
            _failures.erase(it);
            return e;
        }
    }
    return std::nullopt;
}

void fake_client::record(std::string_view verb, const resource_kind& kind, std::string_view ns,
                         std::string_view name) {
    _writes.push_back({std::string(verb), kind.kind, std::string(ns), std::string(name), {}});
}

json fake_client::stamp_new(const resource_kind& kind, std::string_view ns, json object) {
    object["apiVersion"] = str(kind.api_version());
    object["kind"] = str(kind.kind);
    json& meta = metadata_of(object);
    if (kind.namespaced) {
        meta["namespace"] = str(ns);
    }
    meta["uid"] = str(fmt::format("00000000-0000-0000-0000-{:012}", ++_uids));
    meta["resourceVersion"] = str(next_version());
    meta["generation"] = num(1);
    meta["creationTimestamp"] = str(fake_time);
    return object;
}

result<json> fake_client::get(const resource_kind& kind, std::string_view ns,
                              std::string_view name) {
    std::lock_guard lock(_mutex);
    if (auto e = take_failure("get", kind))
        return *e;
    auto it = _objects.find(key_of(kind, ns, name));
    if (it == _objects.end())
        return not_found(kind, name);
    return it->second;
}

result<list_result> fake_client::list(const resource_kind& kind, std::string_view ns,
                                      const list_options& options) {
    std::lock_guard lock(_mutex);
    if (auto e = take_failure("list", kind))
        return *e;
    list_result out;
    for (const auto& [k, object] : _objects) {
        const auto& [plural, object_ns, name] = k;
        if (plural != kind.plural || (!ns.empty() && kind.namespaced && object_ns != ns))
            continue;
        if (labels_match(object, options.label_selector))
            out.items.push_back(object);
    }
    out.resource_version = std::to_string(_version);
    return out;
}

result<std::string> fake_client::watch(const resource_kind& kind, std::string_view ns,
                                       const list_options& options,
                                       const std::string& resource_version, int,
                                       const std::function<bool(const watch_event&)>& on_event) {
    auto listed = list(kind, ns, options);
    if (!listed)
        return listed.error();
    if (options.send_initial_events && resource_version.empty()) {
        for (const auto& item : listed.value().items) {
            if (!on_event({event_type::added, item}))
                break;
        }
    }
    return listed.value().resource_version;
}

result<json> fake_client::apply(const resource_kind& kind, std::string_view ns,
                                std::string_view name, const json& object, bool) {
    std::lock_guard lock(_mutex);
    if (auto e = take_failure("apply", kind))
        return *e;
    record("apply", kind, ns, name);
    auto k = key_of(kind, ns, name);
    auto it = _objects.find(k);
    if (it == _objects.end()) {
        json stored = stamp_new(kind, ns, object);
        metadata_of(stored)["name"] = str(name);
        erase_field(stored, "status");
        return _objects[k] = stored;
    }
    json& current = it->second;
    json updated = object;
    // Top-level fields first: inserting into a cpprestsdk object invalidates references into it.
    updated["apiVersion"] = str(kind.api_version());
    updated["kind"] = str(kind.kind);
    if (current.has_field("status"))
        updated["status"] = current.at("status");
    else
        erase_field(updated, "status");
    json& meta = metadata_of(updated);
    const json& old_meta = current.at("metadata");
    for (const char* field : {"uid", "creationTimestamp", "generation", "deletionTimestamp",
                              "finalizers", "namespace"}) {
        if (old_meta.has_field(field) && !meta.has_field(field))
            meta[field] = old_meta.at(field);
    }
    if (content_of(updated) != content_of(current))
        meta["generation"] = num(get_int(old_meta, "generation") + 1);
    meta["resourceVersion"] = old_meta.at("resourceVersion");
    if (updated != current)  // an unchanged apply is a no-op, as on the API server
        meta["resourceVersion"] = str(next_version());
    return current = updated;
}

result<json> fake_client::create(const resource_kind& kind, std::string_view ns,
                                 const json& object) {
    std::lock_guard lock(_mutex);
    if (auto e = take_failure("create", kind))
        return *e;
    const json* meta = find(object, "metadata");
    std::string name = meta ? get_string(*meta, "name") : "";
    record("create", kind, ns, name);
    auto k = key_of(kind, ns, name);
    if (_objects.count(k))
        return api_error(409, "AlreadyExists",
                         fmt::format("{} \"{}\" already exists", kind.plural, name));
    return _objects[k] = stamp_new(kind, ns, object);
}

result<json> fake_client::replace(const resource_kind& kind, std::string_view ns,
                                  std::string_view name, const json& object) {
    std::lock_guard lock(_mutex);
    if (auto e = take_failure("replace", kind))
        return *e;
    record("replace", kind, ns, name);
    auto it = _objects.find(key_of(kind, ns, name));
    if (it == _objects.end())
        return not_found(kind, name);
    json& current = it->second;
    const json& old_meta = current.at("metadata");
    const json* meta = find(object, "metadata");
    std::string rv = meta ? get_string(*meta, "resourceVersion") : "";
    if (!rv.empty() && rv != get_string(old_meta, "resourceVersion"))
        return conflict(kind, name, "the object has been modified");
    json updated = object;
    if (current.has_field("status"))
        updated["status"] = current.at("status");
    json& new_meta = metadata_of(updated);
    for (const char* field : {"uid", "creationTimestamp", "namespace", "name"})
        if (old_meta.has_field(field))
            new_meta[field] = old_meta.at(field);
    new_meta["generation"] =
        num(get_int(old_meta, "generation") + (content_of(updated) != content_of(current) ? 1 : 0));
    new_meta["resourceVersion"] = str(next_version());
    if (released(updated)) {
        _objects.erase(it);
        return updated;
    }
    return current = updated;
}

result<json> fake_client::replace_status(const resource_kind& kind, std::string_view ns,
                                         std::string_view name, const json& object) {
    std::lock_guard lock(_mutex);
    if (auto e = take_failure("replace_status", kind))
        return *e;
    record("replace_status", kind, ns, name);
    auto it = _objects.find(key_of(kind, ns, name));
    if (it == _objects.end())
        return not_found(kind, name);
    json& current = it->second;
    const json* meta = find(object, "metadata");
    std::string rv = meta ? get_string(*meta, "resourceVersion") : "";
    if (!rv.empty() && rv != get_string(current.at("metadata"), "resourceVersion"))
        return conflict(kind, name, "the object has been modified");
    if (object.has_field("status"))
        current["status"] = object.at("status");
    else
        erase_field(current, "status");
    current["metadata"]["resourceVersion"] = str(next_version());
    return current;
}

result<json> fake_client::merge_patch(const resource_kind& kind, std::string_view ns,
                                      std::string_view name, const json& patch) {
    std::lock_guard lock(_mutex);
    if (auto e = take_failure("merge_patch", kind))
        return *e;
    record("merge_patch", kind, ns, name);
    auto it = _objects.find(key_of(kind, ns, name));
    if (it == _objects.end())
        return not_found(kind, name);
    json& current = it->second;
    const json* meta = find(patch, "metadata");
    std::string rv = meta ? get_string(*meta, "resourceVersion") : "";
    if (!rv.empty() && rv != get_string(current.at("metadata"), "resourceVersion"))
        return conflict(kind, name, "the object has been modified");
    json updated = merge(current, patch);
    json& new_meta = updated["metadata"];
    for (const char* field : {"uid", "creationTimestamp", "namespace", "name"})
        new_meta[field] = current.at("metadata").at(field);
    new_meta["generation"] = num(get_int(current.at("metadata"), "generation") +
                                 (content_of(updated) != content_of(current) ? 1 : 0));
    new_meta["resourceVersion"] = str(next_version());
    if (released(updated)) {
        _objects.erase(it);
        return updated;
    }
    return current = updated;
}

result<json> fake_client::remove(const resource_kind& kind, std::string_view ns,
                                 std::string_view name, std::string_view uid) {
    return remove(kind, ns, name, delete_options{std::string(uid), {}});
}

result<json> fake_client::remove(const resource_kind& kind, std::string_view ns,
                                 std::string_view name, const delete_options& options) {
    std::string_view uid = options.uid;
    std::lock_guard lock(_mutex);
    if (auto e = take_failure("remove", kind))
        return *e;
    record("remove", kind, ns, name);
    _writes.back().detail = options.propagation_policy;
    auto it = _objects.find(key_of(kind, ns, name));
    if (it == _objects.end())
        return not_found(kind, name);
    json& meta = it->second["metadata"];
    if (!uid.empty() && get_string(meta, "uid") != uid)
        return conflict(kind, name, "the UID in the precondition does not match");
    const json* finalizers = find(meta, "finalizers");
    if (finalizers && finalizers->is_array() && finalizers->size() > 0) {
        if (!meta.has_field("deletionTimestamp")) {
            meta["deletionTimestamp"] = str(fake_time);
            meta["resourceVersion"] = str(next_version());
        }
        return it->second;
    }
    json gone = it->second;
    _objects.erase(it);
    return gone;
}

void fake_client::cancel() {
    std::lock_guard lock(_mutex);
    _cancelled = true;
}

json fake_client::put(const resource_kind& kind, const json& object) {
    std::lock_guard lock(_mutex);
    const json* meta = find(object, "metadata");
    std::string ns = meta ? get_string(*meta, "namespace") : "";
    std::string name = meta ? get_string(*meta, "name") : "";
    auto k = key_of(kind, ns, name);
    json stored = object;
    auto it = _objects.find(k);
    if (it == _objects.end()) {
        json stamped = stamp_new(kind, ns, object);
        // Keep what the test set (a generation, a uid), fill in the rest.
        stored = merge(stamped, object);
    }
    metadata_of(stored)["resourceVersion"] = str(next_version());
    return _objects[k] = stored;
}

std::optional<json> fake_client::object(const resource_kind& kind, std::string_view ns,
                                        std::string_view name) const {
    std::lock_guard lock(_mutex);
    auto it = _objects.find(key_of(kind, ns, name));
    if (it == _objects.end())
        return std::nullopt;
    return it->second;
}

bool fake_client::erase(const resource_kind& kind, std::string_view ns, std::string_view name) {
    std::lock_guard lock(_mutex);
    return _objects.erase(key_of(kind, ns, name)) > 0;
}

std::vector<recorded_write> fake_client::writes() const {
    std::lock_guard lock(_mutex);
    return _writes;
}

void fake_client::clear_writes() {
    std::lock_guard lock(_mutex);
    _writes.clear();
}

void fake_client::fail_next(std::string verb, error e, std::string kind) {
    std::lock_guard lock(_mutex);
    _failures.push_back({std::move(verb), std::move(kind), std::move(e)});
}

}  // namespace spool::op::kube::testing
