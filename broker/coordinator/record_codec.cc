#include "broker/coordinator/record_codec.h"

#include "broker/coordinator/errc.h"
#include "protocol/wire/reader.h"
#include "protocol/wire/writer.h"

namespace spool::broker::coordinator {

namespace {

using protocol::wire::reader;
using protocol::wire::writer;

constexpr int16_t offset_key_version = 1;
constexpr int16_t group_key_version = 2;
constexpr int16_t offset_value_version = 3;
constexpr int16_t offset_value_version_with_expiry = 1;
constexpr int16_t group_value_version = 3;

void put_string(writer& w, std::string_view s) {
    w.write_i16(static_cast<int16_t>(s.size()));
    w.write_raw(s);
}

void put_nullable_string(writer& w, const std::optional<std::string>& s) {
    if (!s) {
        w.write_i16(-1);
    } else {
        put_string(w, *s);
    }
}

void put_bytes(writer& w, const bytes& b) {
    w.write_i32(static_cast<int32_t>(b.size()));
    w.write_bytes(b);
}

// Reads strings, bytes and arrays in either the classic or the flexible (compact) encoding.
class field_reader {
public:
    field_reader(std::span<const uint8_t> data, bool flexible) : _r(data), _flexible(flexible) {}
    reader& raw() { return _r; }

    std::optional<std::string> nullable_string() {
        int64_t len = _flexible ? static_cast<int64_t>(_r.read_uvarint()) - 1 : _r.read_i16();
        if (len < 0) {
            return std::nullopt;
        }
        return std::string(_r.read_string_view(static_cast<size_t>(len)));
    }
    std::string string() { return nullable_string().value_or(std::string{}); }
    bytes nullable_bytes() {
        int64_t len = _flexible ? static_cast<int64_t>(_r.read_uvarint()) - 1 : _r.read_i32();
        if (len < 0) {
            return {};
        }
        auto b = _r.read_bytes(static_cast<size_t>(len));
        return {b.begin(), b.end()};
    }
    int64_t array_count() {
        return _flexible ? static_cast<int64_t>(_r.read_uvarint()) - 1 : _r.read_i32();
    }
    void skip_tags() {
        if (!_flexible) {
            return;
        }
        uint32_t n = _r.read_uvarint();
        for (uint32_t i = 0; i < n && _r.ok(); ++i) {
            (void)_r.read_uvarint();
            _r.skip(_r.read_uvarint());
        }
    }
    bool ok() const { return _r.ok(); }

private:
    reader _r;
    bool _flexible;
};

template <class T>
result<T> bad() {
    return make_error_code(errc::storage_error);
}

}  // namespace

bytes encode_offset_key(const std::string& group, const model::topic_partition& tp) {
    bytes out;
    out.reserve(2 + 2 + group.size() + 2 + tp.topic.size() + 4);
    writer w(out);
    w.write_i16(offset_key_version);
    put_string(w, group);
    put_string(w, tp.topic);
    w.write_i32(tp.partition.value());
    return out;
}

bytes encode_group_key(const std::string& group) {
    bytes out;
    writer w(out);
    w.write_i16(group_key_version);
    put_string(w, group);
    return out;
}

bytes encode_offset_value(const committed_offset& o) {
    bytes out;
    writer w(out);
    if (o.expire_timestamp_ms >= 0) {
        w.write_i16(offset_value_version_with_expiry);
        w.write_i64(o.offset);
        put_string(w, o.metadata);
        w.write_i64(o.commit_timestamp_ms);
        w.write_i64(o.expire_timestamp_ms);
        return out;
    }
    w.write_i16(offset_value_version);
    w.write_i64(o.offset);
    w.write_i32(o.leader_epoch);
    put_string(w, o.metadata);
    w.write_i64(o.commit_timestamp_ms);
    return out;
}

bytes encode_group_value(const stored_group& g) {
    bytes out;
    writer w(out);
    w.write_i16(group_value_version);
    put_string(w, g.protocol_type);
    w.write_i32(g.generation);
    put_nullable_string(w, g.protocol_name);
    put_nullable_string(w, g.leader);
    w.write_i64(g.current_state_timestamp_ms);
    w.write_i32(static_cast<int32_t>(g.members.size()));
    for (const auto& m : g.members) {
        put_string(w, m.member_id);
        put_nullable_string(w, m.group_instance_id);
        put_string(w, m.client_id);
        put_string(w, m.client_host);
        w.write_i32(m.rebalance_timeout_ms);
        w.write_i32(m.session_timeout_ms);
        put_bytes(w, m.subscription);
        put_bytes(w, m.assignment);
    }
    return out;
}

result<record_key> decode_key(std::span<const uint8_t> key) {
    field_reader r(key, false);
    int16_t version = r.raw().read_i16();
    if (version == 0 || version == 1) {
        offset_key k;
        k.group = r.string();
        k.tp.topic = r.string();
        k.tp.partition = model::partition_id{r.raw().read_i32()};
        if (!r.ok()) {
            return bad<record_key>();
        }
        return record_key{std::move(k)};
    }
    if (version == 2) {
        group_key k{r.string()};
        if (!r.ok()) {
            return bad<record_key>();
        }
        return record_key{std::move(k)};
    }
    // Version 3+ keys belong to other coordinators (KIP-848 records): not ours to read.
    return bad<record_key>();
}

result<committed_offset> decode_offset_value(std::span<const uint8_t> value) {
    reader peek(value);
    int16_t version = peek.read_i16();
    if (!peek.ok() || version < 0 || version > 4) {
        return bad<committed_offset>();
    }
    field_reader r(value.subspan(2), version >= 4);
    committed_offset o;
    o.offset = r.raw().read_i64();
    if (version >= 3) {
        o.leader_epoch = r.raw().read_i32();
    }
    o.metadata = r.string();
    o.commit_timestamp_ms = r.raw().read_i64();
    if (version == 1) {
        o.expire_timestamp_ms = r.raw().read_i64();
    }
    r.skip_tags();
    if (!r.ok()) {
        return bad<committed_offset>();
    }
    return o;
}

result<stored_group> decode_group_value(std::span<const uint8_t> value) {
    reader peek(value);
    int16_t version = peek.read_i16();
    if (!peek.ok() || version < 0 || version > 4) {
        return bad<stored_group>();
    }
    field_reader r(value.subspan(2), version >= 4);
    stored_group g;
    g.protocol_type = r.string();
    g.generation = r.raw().read_i32();
    g.protocol_name = r.nullable_string();
    g.leader = r.nullable_string();
    if (version >= 2) {
        g.current_state_timestamp_ms = r.raw().read_i64();
    }
    int64_t count = r.array_count();
    if (!r.ok() || count < 0 || !r.raw().can_hold(static_cast<uint64_t>(count), 16)) {
        return bad<stored_group>();
    }
    for (int64_t i = 0; i < count && r.ok(); ++i) {
        stored_member m;
        m.member_id = r.string();
        if (version >= 3) {
            m.group_instance_id = r.nullable_string();
        }
        m.client_id = r.string();
        m.client_host = r.string();
        m.rebalance_timeout_ms = version >= 1 ? r.raw().read_i32() : 0;
        m.session_timeout_ms = r.raw().read_i32();
        if (version == 0) {
            m.rebalance_timeout_ms = m.session_timeout_ms;
        }
        m.subscription = r.nullable_bytes();
        m.assignment = r.nullable_bytes();
        r.skip_tags();
        g.members.push_back(std::move(m));
    }
    r.skip_tags();
    if (!r.ok()) {
        return bad<stored_group>();
    }
    return g;
}

}  // namespace spool::broker::coordinator
