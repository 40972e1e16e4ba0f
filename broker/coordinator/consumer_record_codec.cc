#include "broker/coordinator/consumer_record_codec.h"

#include "broker/coordinator/errc.h"
#include "protocol/wire/reader.h"
#include "protocol/wire/writer.h"

namespace spool::broker::coordinator {

namespace {

using protocol::wire::reader;
using protocol::wire::writer;

void put_string(writer& w, std::string_view s) {
    w.write_i16(static_cast<int16_t>(s.size()));
    w.write_raw(s);
}

void put_compact(writer& w, std::string_view s) {
    w.write_uvarint(s.size() + 1);
    w.write_raw(s);
}

void put_compact_nullable(writer& w, const std::optional<std::string>& s) {
    if (!s) {
        w.write_uvarint(0);
    } else {
        put_compact(w, *s);
    }
}

void put_partitions(writer& w, const assignment_map& a) {
    w.write_uvarint(a.size() + 1);
    for (const auto& [t, ps] : a) {
        w.write_bytes(t.bytes);
        w.write_uvarint(ps.size() + 1);
        for (int32_t p : ps) {
            w.write_i32(p);
        }
        w.write_uvarint(0);  // tagged fields
    }
}

class compact_reader {
public:
    explicit compact_reader(std::span<const uint8_t> data) : _r(data) {}
    reader& raw() { return _r; }
    std::optional<std::string> nullable_string() {
        int64_t len = static_cast<int64_t>(_r.read_uvarint()) - 1;
        if (len < 0) {
            return std::nullopt;
        }
        return std::string(_r.read_string_view(static_cast<size_t>(len)));
    }
    std::string string() { return nullable_string().value_or(std::string{}); }
    int64_t count(size_t min_element) {
        int64_t n = static_cast<int64_t>(_r.read_uvarint()) - 1;
        if (n > 0 && !_r.can_hold(static_cast<uint64_t>(n), min_element)) {
            return -1;
        }
        return n;
    }
    void skip_tags() {
        uint32_t n = _r.read_uvarint();
        for (uint32_t i = 0; i < n && _r.ok(); ++i) {
            (void)_r.read_uvarint();
            _r.skip(_r.read_uvarint());
        }
    }
    assignment_map partitions() {
        assignment_map out;
        int64_t n = count(18);
        for (int64_t i = 0; i < n && _r.ok(); ++i) {
            protocol::uuid id;
            auto b = _r.read_bytes(16);
            if (!_r.ok()) {
                break;
            }
            std::copy(b.begin(), b.end(), id.bytes.begin());
            auto& ps = out[id];
            int64_t k = count(4);
            for (int64_t j = 0; j < k && _r.ok(); ++j) {
                ps.insert(_r.read_i32());
            }
            skip_tags();
        }
        return out;
    }
    bool ok() { return _r.ok(); }

private:
    reader _r;
};

// Values are version 0; a newer version (not yet defined by Kafka) is not ours to read.
bool value_version_ok(compact_reader& r) {
    return r.raw().read_i16() == 0 && r.ok();
}

std::error_code bad() {
    return make_error_code(errc::storage_error);
}

}  // namespace

bytes_t encode_consumer_key(consumer_record type, const std::string& group,
                            const std::string& member) {
    bytes_t out;
    writer w(out);
    w.write_i16(static_cast<int16_t>(type));
    put_string(w, group);
    switch (type) {
        case consumer_record::member_metadata:
        case consumer_record::target_member:
        case consumer_record::current_assignment:
            put_string(w, member);
            break;
        default:
            break;
    }
    return out;
}

bytes_t encode_group_epoch(int32_t epoch) {
    bytes_t out;
    writer w(out);
    w.write_i16(0);
    w.write_i32(epoch);
    w.write_uvarint(0);
    return out;
}

bytes_t encode_target_epoch(int32_t epoch) {
    return encode_group_epoch(epoch);  // same layout: int32 and no tagged fields
}

bytes_t encode_member_metadata(const consumer_member& m) {
    bytes_t out;
    writer w(out);
    w.write_i16(0);
    put_compact_nullable(w, m.instance_id);
    put_compact_nullable(w, m.rack_id);
    put_compact(w, m.client_id);
    put_compact(w, m.client_host);
    w.write_uvarint(m.subscribed_topic_names.size() + 1);
    for (const auto& t : m.subscribed_topic_names) {
        put_compact(w, t);
    }
    put_compact_nullable(w, m.subscribed_regex);
    w.write_i32(m.rebalance_timeout_ms);
    put_compact_nullable(w, m.server_assignor);
    w.write_uvarint(0);
    return out;
}

bytes_t encode_target_member(const assignment_map& target) {
    bytes_t out;
    writer w(out);
    w.write_i16(0);
    put_partitions(w, target);
    w.write_uvarint(0);
    return out;
}

bytes_t encode_current_assignment(const consumer_member& m) {
    bytes_t out;
    writer w(out);
    w.write_i16(0);
    w.write_i32(m.member_epoch);
    w.write_i32(m.previous_member_epoch);
    w.write_i8(static_cast<int8_t>(m.state));
    put_partitions(w, m.assigned);
    put_partitions(w, m.pending_revocation);
    w.write_uvarint(0);
    return out;
}

std::optional<consumer_key> decode_consumer_key(std::span<const uint8_t> key) {
    reader r(key);
    int16_t version = r.read_i16();
    if (!r.ok() || version < 3 || version > 8) {
        return std::nullopt;
    }
    auto read_string = [&]() {
        int16_t len = r.read_i16();
        return len < 0 ? std::string{} : std::string(r.read_string_view(static_cast<size_t>(len)));
    };
    consumer_key k{static_cast<consumer_record>(version), read_string(), {}};
    switch (k.type) {
        case consumer_record::member_metadata:
        case consumer_record::target_member:
        case consumer_record::current_assignment:
            k.member = read_string();
            break;
        default:
            break;
    }
    if (!r.ok()) {
        return std::nullopt;
    }
    return k;
}

result<int32_t> decode_epoch(std::span<const uint8_t> value) {
    compact_reader r(value);
    if (!value_version_ok(r)) {
        return bad();
    }
    int32_t epoch = r.raw().read_i32();
    r.skip_tags();
    if (!r.ok()) {
        return bad();
    }
    return epoch;
}

std::error_code decode_member_metadata(std::span<const uint8_t> value, consumer_member& m) {
    compact_reader r(value);
    if (!value_version_ok(r)) {
        return bad();
    }
    m.instance_id = r.nullable_string();
    m.rack_id = r.nullable_string();
    m.client_id = r.string();
    m.client_host = r.string();
    m.subscribed_topic_names.clear();
    int64_t n = r.count(1);
    for (int64_t i = 0; i < n && r.ok(); ++i) {
        m.subscribed_topic_names.push_back(r.string());
    }
    m.subscribed_regex = r.nullable_string();
    m.rebalance_timeout_ms = r.raw().read_i32();
    m.server_assignor = r.nullable_string();
    r.skip_tags();
    return r.ok() ? std::error_code{} : bad();
}

result<assignment_map> decode_target_member(std::span<const uint8_t> value) {
    compact_reader r(value);
    if (!value_version_ok(r)) {
        return bad();
    }
    auto a = r.partitions();
    r.skip_tags();
    if (!r.ok()) {
        return bad();
    }
    return a;
}

std::error_code decode_current_assignment(std::span<const uint8_t> value, consumer_member& m) {
    compact_reader r(value);
    if (!value_version_ok(r)) {
        return bad();
    }
    m.member_epoch = r.raw().read_i32();
    m.previous_member_epoch = r.raw().read_i32();
    m.state = static_cast<member_state>(r.raw().read_i8());
    m.assigned = r.partitions();
    m.pending_revocation = r.partitions();
    r.skip_tags();
    return r.ok() ? std::error_code{} : bad();
}

}  // namespace spool::broker::coordinator
