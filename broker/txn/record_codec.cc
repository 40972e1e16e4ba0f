#include "broker/txn/record_codec.h"

#include "broker/txn/errc.h"
#include "protocol/wire/reader.h"
#include "protocol/wire/writer.h"

#include <map>

namespace spool::broker::txn {

namespace {

using protocol::wire::reader;
using protocol::wire::writer;

constexpr int16_t key_version = 0;
constexpr int16_t value_version = 1;

constexpr uint32_t tag_previous_producer_id = 0;
constexpr uint32_t tag_next_producer_id = 1;
constexpr uint32_t tag_client_txn_version = 2;

void put_compact_string(writer& w, std::string_view s) {
    w.write_uvarint(s.size() + 1);
    w.write_raw(s);
}

// A tagged field: tag | size | the value's fixed-width bytes.
template <class Put>
void put_tag(writer& w, uint32_t tag, uint32_t size, Put put) {
    w.write_uvarint(tag);
    w.write_uvarint(size);
    put();
}

}  // namespace

bytes encode_key(std::string_view transactional_id) {
    bytes out;
    writer w(out);
    w.write_i16(key_version);
    w.write_i16(static_cast<int16_t>(transactional_id.size()));
    w.write_raw(transactional_id);
    return out;
}

bytes encode_value(const txn_metadata& m) {
    bytes out;
    writer w(out);
    w.write_i16(value_version);
    w.write_i64(m.producer_id);
    w.write_i16(m.producer_epoch);
    w.write_i32(m.timeout_ms);
    w.write_i8(static_cast<int8_t>(m.state));
    if (m.state == txn_state::empty) {
        w.write_uvarint(0);  // null
    } else {
        std::map<std::string_view, std::vector<int32_t>> by_topic;
        for (const auto& p : m.partitions) {
            by_topic[p.topic].push_back(p.partition);
        }
        w.write_uvarint(by_topic.size() + 1);
        for (const auto& [topic, ids] : by_topic) {
            put_compact_string(w, topic);
            w.write_uvarint(ids.size() + 1);
            for (int32_t id : ids) {
                w.write_i32(id);
            }
            w.write_uvarint(0);  // no tagged fields
        }
    }
    w.write_i64(m.last_update_ms);
    w.write_i64(m.start_ms);
    uint32_t tags = (m.previous_producer_id != no_producer_id ? 1 : 0) +
                    (m.next_producer_id != no_producer_id ? 1 : 0) +
                    (m.client_txn_version != 0 ? 1 : 0);
    w.write_uvarint(tags);
    if (m.previous_producer_id != no_producer_id) {
        put_tag(w, tag_previous_producer_id, 8, [&] { w.write_i64(m.previous_producer_id); });
    }
    if (m.next_producer_id != no_producer_id) {
        put_tag(w, tag_next_producer_id, 8, [&] { w.write_i64(m.next_producer_id); });
    }
    if (m.client_txn_version != 0) {
        put_tag(w, tag_client_txn_version, 2, [&] { w.write_i16(m.client_txn_version); });
    }
    return out;
}

result<std::string> decode_key(std::span<const uint8_t> key) {
    reader r(key);
    int16_t version = r.read_i16();
    if (!r.ok() || version != key_version) {
        return make_error_code(errc::invalid_request);
    }
    int16_t len = r.read_i16();
    if (len < 0) {
        return make_error_code(errc::invalid_request);
    }
    std::string id(r.read_string_view(static_cast<size_t>(len)));
    if (!r.ok()) {
        return make_error_code(errc::invalid_request);
    }
    return id;
}

result<txn_metadata> decode_value(std::string transactional_id, std::span<const uint8_t> value) {
    reader r(value);
    const int16_t version = r.read_i16();
    if (!r.ok() || version < 0 || version > value_version) {
        return make_error_code(errc::invalid_request);
    }
    const bool flexible = version >= 1;
    auto count = [&]() -> int64_t {
        return flexible ? static_cast<int64_t>(r.read_uvarint()) - 1 : r.read_i32();
    };
    auto skip_tags = [&] {
        uint32_t n = r.read_uvarint();
        for (uint32_t i = 0; i < n && r.ok(); ++i) {
            (void)r.read_uvarint();
            r.skip(r.read_uvarint());
        }
    };
    txn_metadata m;
    m.transactional_id = std::move(transactional_id);
    m.producer_id = r.read_i64();
    m.producer_epoch = r.read_i16();
    m.timeout_ms = r.read_i32();
    const int8_t status = r.read_i8();
    if (status < 0 || status > static_cast<int8_t>(txn_state::prepare_epoch_fence)) {
        return make_error_code(errc::invalid_request);
    }
    m.state = static_cast<txn_state>(status);
    const int64_t topics = count();
    for (int64_t t = 0; t < topics && r.ok(); ++t) {
        const int64_t len = count();
        if (len < 0) {
            return make_error_code(errc::invalid_request);
        }
        std::string topic(r.read_string_view(static_cast<size_t>(len)));
        const int64_t ids = count();
        for (int64_t i = 0; i < ids && r.ok(); ++i) {
            m.partitions.insert({topic, r.read_i32()});
        }
        if (flexible) {
            skip_tags();
        }
    }
    m.last_update_ms = r.read_i64();
    m.start_ms = r.read_i64();
    if (flexible) {
        uint32_t n = r.read_uvarint();
        for (uint32_t i = 0; i < n && r.ok(); ++i) {
            const uint32_t tag = r.read_uvarint();
            const uint32_t size = r.read_uvarint();
            if (tag == tag_previous_producer_id && size == 8) {
                m.previous_producer_id = r.read_i64();
            } else if (tag == tag_next_producer_id && size == 8) {
                m.next_producer_id = r.read_i64();
            } else if (tag == tag_client_txn_version && size == 2) {
                m.client_txn_version = r.read_i16();
            } else {
                r.skip(size);
            }
        }
    }
    if (!r.ok()) {
        return make_error_code(errc::invalid_request);
    }
    return m;
}

}  // namespace spool::broker::txn
