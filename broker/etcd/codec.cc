#include "broker/etcd/codec.h"

#include <array>
#include <charconv>
#include <nlohmann/json.hpp>

namespace spool::broker::etcd::codec {

using nlohmann::json;

namespace {

constexpr std::string_view base64_alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::error_code bad() {
    return make_error_code(errc::bad_response);
}

result<json> parse(std::string_view body) {
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
        return bad();
    }
    return j;
}

// An int64 field: absent -> 0; proto3 JSON writes int64 as a string, accept a number too.
result<int64_t> int_field(const json& obj, const char* name) {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) {
        return int64_t{0};
    }
    if (it->is_number_integer()) {
        return it->get<int64_t>();
    }
    if (!it->is_string()) {
        return bad();
    }
    const auto& text = it->get_ref<const std::string&>();
    int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
        return bad();
    }
    return value;
}

result<bool> bool_field(const json& obj, const char* name) {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) {
        return false;
    }
    if (!it->is_boolean()) {
        return bad();
    }
    return it->get<bool>();
}

result<std::string> bytes_field(const json& obj, const char* name) {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) {
        return std::string();
    }
    if (!it->is_string()) {
        return bad();
    }
    return base64_decode(it->get_ref<const std::string&>());
}

// obj[name] as an object ({} when absent); nullptr when present but not an object.
const json* object_field(const json& obj, const char* name) {
    static const json empty = json::object();
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) {
        return &empty;
    }
    return it->is_object() ? &*it : nullptr;
}

const json* array_field(const json& obj, const char* name) {
    static const json empty = json::array();
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) {
        return &empty;
    }
    return it->is_array() ? &*it : nullptr;
}

result<int64_t> header_revision(const json& obj) {
    const json* header = object_field(obj, "header");
    if (header == nullptr) {
        return bad();
    }
    return int_field(*header, "revision");
}

result<key_value> decode_kv(const json& j) {
    if (!j.is_object()) {
        return bad();
    }
    key_value kv;
    SPOOL_TRY(key, bytes_field(j, "key"));
    SPOOL_TRY(value, bytes_field(j, "value"));
    SPOOL_TRY(create_revision, int_field(j, "create_revision"));
    SPOOL_TRY(mod_revision, int_field(j, "mod_revision"));
    SPOOL_TRY(version, int_field(j, "version"));
    SPOOL_TRY(lease_id, int_field(j, "lease"));
    kv.key = std::move(key);
    kv.value = std::move(value);
    kv.create_revision = create_revision;
    kv.mod_revision = mod_revision;
    kv.version = version;
    kv.lease = lease_id;
    return kv;
}

result<range_result> decode_range_object(const json& j) {
    range_result out;
    SPOOL_TRY(revision, header_revision(j));
    SPOOL_TRY(more, bool_field(j, "more"));
    SPOOL_TRY(count, int_field(j, "count"));
    const json* kvs = array_field(j, "kvs");
    if (kvs == nullptr) {
        return bad();
    }
    out.kvs.reserve(kvs->size());
    for (const json& item : *kvs) {
        SPOOL_TRY(kv, decode_kv(item));
        out.kvs.push_back(std::move(kv));
    }
    out.revision = revision;
    out.more = more;
    out.count = count;
    return out;
}

const char* target_name(compare::target t) {
    switch (t) {
        case compare::target::version:
            return "VERSION";
        case compare::target::create_revision:
            return "CREATE";
        case compare::target::mod_revision:
            return "MOD";
        case compare::target::value:
            return "VALUE";
        case compare::target::lease:
            return "LEASE";
    }
    return "VERSION";
}

// The name of the compare's operand field in etcd's Compare message.
const char* target_field(compare::target t) {
    switch (t) {
        case compare::target::version:
            return "version";
        case compare::target::create_revision:
            return "create_revision";
        case compare::target::mod_revision:
            return "mod_revision";
        case compare::target::value:
            return "value";
        case compare::target::lease:
            return "lease";
    }
    return "version";
}

const char* op_name(compare::op o) {
    switch (o) {
        case compare::op::equal:
            return "EQUAL";
        case compare::op::not_equal:
            return "NOT_EQUAL";
        case compare::op::less:
            return "LESS";
        case compare::op::greater:
            return "GREATER";
    }
    return "EQUAL";
}

json range_json(std::string_view key, std::string_view range_end, int64_t revision, int64_t limit) {
    json j = {{"key", base64_encode(key)}};
    if (!range_end.empty()) {
        j["range_end"] = base64_encode(range_end);
    }
    if (revision > 0) {
        j["revision"] = std::to_string(revision);
    }
    if (limit > 0) {
        j["limit"] = std::to_string(limit);
    }
    return j;
}

json put_json(std::string_view key, std::string_view value, int64_t lease_id) {
    json j = {{"key", base64_encode(key)}, {"value", base64_encode(value)}};
    if (lease_id != 0) {
        j["lease"] = std::to_string(lease_id);
    }
    return j;
}

json delete_json(std::string_view key, std::string_view range_end) {
    json j = {{"key", base64_encode(key)}};
    if (!range_end.empty()) {
        j["range_end"] = base64_encode(range_end);
    }
    return j;
}

json op_json(const txn_op& op) {
    if (const auto* p = std::get_if<put_op>(&op)) {
        return {{"request_put", put_json(p->key, p->value, p->lease)}};
    }
    if (const auto* d = std::get_if<delete_op>(&op)) {
        return {{"request_delete_range", delete_json(d->key, d->range_end)}};
    }
    const auto& r = std::get<range_op>(op);
    return {{"request_range", range_json(r.key, r.range_end, 0, r.limit)}};
}

json ops_json(const std::vector<txn_op>& ops) {
    json out = json::array();
    for (const auto& op : ops) {
        out.push_back(op_json(op));
    }
    return out;
}

result<watch_event> decode_event(const json& j) {
    if (!j.is_object()) {
        return bad();
    }
    watch_event ev;
    auto type = j.find("type");
    if (type != j.end() && !type->is_null()) {
        if (!type->is_string()) {
            return bad();
        }
        const auto& name = type->get_ref<const std::string&>();
        if (name == "DELETE") {
            ev.type = watch_event::kind::del;
        } else if (name != "PUT") {
            return bad();
        }
    }
    auto kv = j.find("kv");
    if (kv == j.end() || !kv->is_object()) {
        return bad();
    }
    SPOOL_TRY(decoded, decode_kv(*kv));
    ev.kv = std::move(decoded);
    return ev;
}

// A watch stream's {"error":{...}}: the gateway lost its gRPC stream (etcd shutting down, no
// leader): the watch is over and must be resumed.
watch_message stream_error(const json& err) {
    watch_message m;
    m.what = watch_message::kind::error;
    m.error = make_error_code(errc::unavailable);
    if (err.is_object()) {
        auto msg = err.find("message");
        if (msg != err.end() && msg->is_string()) {
            m.reason = msg->get<std::string>();
        }
    } else if (err.is_string()) {
        m.reason = err.get<std::string>();
    }
    if (m.reason.find("compacted") != std::string::npos) {
        m.error = make_error_code(errc::compacted);
    }
    return m;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        uint32_t n = (uint32_t(uint8_t(bytes[i])) << 16) | (uint32_t(uint8_t(bytes[i + 1])) << 8) |
                     uint32_t(uint8_t(bytes[i + 2]));
        out += base64_alphabet[(n >> 18) & 63];
        out += base64_alphabet[(n >> 12) & 63];
        out += base64_alphabet[(n >> 6) & 63];
        out += base64_alphabet[n & 63];
    }
    if (i < bytes.size()) {
        uint32_t n = uint32_t(uint8_t(bytes[i])) << 16;
        if (i + 1 < bytes.size()) {
            n |= uint32_t(uint8_t(bytes[i + 1])) << 8;
        }
        out += base64_alphabet[(n >> 18) & 63];
        out += base64_alphabet[(n >> 12) & 63];
        out += i + 1 < bytes.size() ? base64_alphabet[(n >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

result<std::string> base64_decode(std::string_view text) {
    static const std::array<int8_t, 256> table = [] {
        std::array<int8_t, 256> t{};
        t.fill(-1);
        for (size_t i = 0; i < base64_alphabet.size(); ++i) {
            t[uint8_t(base64_alphabet[i])] = int8_t(i);
        }
        return t;
    }();
    if (text.size() % 4 != 0) {
        return bad();
    }
    std::string out;
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        bool last = i + 4 == text.size();
        int pad = 0;
        uint32_t n = 0;
        for (size_t k = 0; k < 4; ++k) {
            char c = text[i + k];
            if (c == '=' && last && k >= 2) {
                ++pad;
                n <<= 6;
                continue;
            }
            int8_t v = table[uint8_t(c)];
            if (v < 0 || pad > 0) {
                return bad();
            }
            n = (n << 6) | uint32_t(v);
        }
        out += char((n >> 16) & 0xff);
        if (pad < 2) {
            out += char((n >> 8) & 0xff);
        }
        if (pad < 1) {
            out += char(n & 0xff);
        }
    }
    return out;
}

std::string encode_range(std::string_view key, std::string_view range_end, int64_t revision,
                         int64_t limit) {
    return range_json(key, range_end, revision, limit).dump();
}

std::string encode_put(std::string_view key, std::string_view value, int64_t lease_id) {
    return put_json(key, value, lease_id).dump();
}

std::string encode_delete(std::string_view key, std::string_view range_end) {
    return delete_json(key, range_end).dump();
}

std::string encode_txn(const txn_request& request) {
    json compares = json::array();
    for (const auto& c : request.compares) {
        json j = {{"key", base64_encode(c.key)},
                  {"target", target_name(c.what)},
                  {"result", op_name(c.how)}};
        if (c.what == compare::target::value) {
            j["value"] = base64_encode(c.value);
        } else {
            j[target_field(c.what)] = std::to_string(c.number);
        }
        if (!c.range_end.empty()) {
            j["range_end"] = base64_encode(c.range_end);
        }
        compares.push_back(std::move(j));
    }
    json j = {{"compare", std::move(compares)},
              {"success", ops_json(request.success)},
              {"failure", ops_json(request.failure)}};
    return j.dump();
}

std::string encode_compaction(int64_t revision) {
    return json{{"revision", std::to_string(revision)}}.dump();
}

std::string encode_lease_grant(int64_t ttl_seconds) {
    return json{{"TTL", std::to_string(ttl_seconds)}}.dump();
}

std::string encode_lease_id(int64_t lease_id) {
    return json{{"ID", std::to_string(lease_id)}}.dump();
}

std::string encode_watch_create(std::string_view key, std::string_view range_end,
                                int64_t start_revision) {
    json create = {{"key", base64_encode(key)}, {"progress_notify", true}};
    if (!range_end.empty()) {
        create["range_end"] = base64_encode(range_end);
    }
    if (start_revision > 0) {
        create["start_revision"] = std::to_string(start_revision);
    }
    return json{{"create_request", std::move(create)}}.dump();
}

result<range_result> decode_range(std::string_view body) {
    SPOOL_TRY(j, parse(body));
    return decode_range_object(j);
}

result<int64_t> decode_revision(std::string_view body) {
    SPOOL_TRY(j, parse(body));
    return header_revision(j);
}

result<int64_t> decode_deleted(std::string_view body) {
    SPOOL_TRY(j, parse(body));
    return int_field(j, "deleted");
}

result<txn_result> decode_txn(std::string_view body) {
    SPOOL_TRY(j, parse(body));
    txn_result out;
    SPOOL_TRY(revision, header_revision(j));
    SPOOL_TRY(succeeded, bool_field(j, "succeeded"));
    out.revision = revision;
    out.succeeded = succeeded;
    const json* responses = array_field(j, "responses");
    if (responses == nullptr) {
        return bad();
    }
    for (const json& r : *responses) {
        if (!r.is_object()) {
            return bad();
        }
        auto range = r.find("response_range");
        if (range == r.end()) {
            continue;  // response_put / response_delete_range carry nothing we return
        }
        if (!range->is_object()) {
            return bad();
        }
        SPOOL_TRY(decoded, decode_range_object(*range));
        out.ranges.push_back(std::move(decoded));
    }
    return out;
}

result<lease> decode_lease_grant(std::string_view body) {
    SPOOL_TRY(j, parse(body));
    SPOOL_TRY(id, int_field(j, "ID"));
    SPOOL_TRY(ttl, int_field(j, "TTL"));
    if (id == 0) {
        return bad();
    }
    return lease{id, ttl};
}

result<int64_t> decode_keep_alive(std::string_view body) {
    // A streamed RPC's answer: one {"result":...} or {"error":...} per line; we sent one request.
    auto line_end = body.find('\n');
    SPOOL_TRY(j, parse(body.substr(0, line_end)));
    if (auto err = j.find("error"); err != j.end()) {
        return stream_error(*err).error;
    }
    const json* res = object_field(j, "result");
    if (res == nullptr) {
        return bad();
    }
    SPOOL_TRY(ttl, int_field(*res, "TTL"));
    if (ttl <= 0) {
        return make_error_code(errc::lease_not_found);
    }
    return ttl;
}

std::error_code decode_error(unsigned http_status, std::string_view body) {
    json j = json::parse(body, nullptr, false);
    int64_t code = -1;
    std::string message;
    if (!j.is_discarded() && j.is_object()) {
        if (auto it = j.find("code"); it != j.end() && it->is_number_integer()) {
            code = it->get<int64_t>();
        }
        if (auto it = j.find("message"); it != j.end() && it->is_string()) {
            message = it->get<std::string>();
        }
    }
    // gRPC codes: 4 DEADLINE_EXCEEDED, 5 NOT_FOUND, 11 OUT_OF_RANGE, 14 UNAVAILABLE.
    switch (code) {
        case 4:
            return make_error_code(errc::timed_out);
        case 5:
            if (message.find("lease not found") != std::string::npos) {
                return make_error_code(errc::lease_not_found);
            }
            break;
        case 11:
            if (message.find("compacted") != std::string::npos) {
                return make_error_code(errc::compacted);
            }
            break;
        case 14:
            return make_error_code(errc::unavailable);
        case -1:
            // No gateway error body: a proxy or a dying process answered.
            return make_error_code(http_status >= 500 ? errc::unavailable : errc::bad_response);
        default:
            break;
    }
    return make_error_code(errc::request_failed);
}

result<watch_message> decode_watch_message(std::string_view line) {
    SPOOL_TRY(j, parse(line));
    if (auto err = j.find("error"); err != j.end()) {
        return stream_error(*err);
    }
    const json* res = object_field(j, "result");
    if (res == nullptr || res->empty()) {
        return bad();
    }
    watch_message m;
    SPOOL_TRY(created, bool_field(*res, "created"));
    SPOOL_TRY(canceled, bool_field(*res, "canceled"));
    SPOOL_TRY(revision, header_revision(*res));
    if (canceled) {
        SPOOL_TRY(compact_revision, int_field(*res, "compact_revision"));
        m.what = watch_message::kind::canceled;
        m.compact_revision = compact_revision;
        // Canceled by etcd for another reason than compaction: the watch is over, resume it.
        m.error = make_error_code(compact_revision > 0 ? errc::compacted : errc::unavailable);
        if (auto reason = res->find("cancel_reason"); reason != res->end() && reason->is_string()) {
            m.reason = reason->get<std::string>();
        }
        return m;
    }
    if (created) {
        m.what = watch_message::kind::created;
        m.batch.revision = revision;
        return m;
    }
    const json* events = array_field(*res, "events");
    if (events == nullptr) {
        return bad();
    }
    m.batch.revision = revision;
    m.batch.progress_notify = events->empty();
    for (const json& e : *events) {
        SPOOL_TRY(ev, decode_event(e));
        m.batch.events.push_back(std::move(ev));
    }
    return m;
}

}  // namespace spool::broker::etcd::codec
