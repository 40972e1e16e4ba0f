#include "protocol/records/record_reader.h"

#include "protocol/records/errc.h"
#include "protocol/wire/reader.h"

namespace spool::protocol::records {

namespace {

// attributes + timestamp delta + offset delta + key length + value length + header count.
constexpr int32_t min_record_body = 6;
// key length + value length.
constexpr size_t min_header_size = 2;

// Reads a varint length where -1 means null; anything else negative, or longer than what is
// left, fails the reader.
nullable_bytes read_nullable(wire::reader& r) {
    int32_t len = r.read_varint();
    if (len == -1) {
        return nullable_bytes::null();
    }
    if (len < 0) {
        r.fail(wire::read_error::bad_length);
        return {};
    }
    return nullable_bytes::of(r.read_bytes(static_cast<size_t>(len)));
}

}  // namespace

bool header_iterator::next(record_header_view& out) {
    if (_left <= 0) {
        return false;
    }
    wire::reader r(_bytes);
    int32_t key_len = r.read_varint();
    out.key = r.read_string_view(static_cast<size_t>(key_len < 0 ? 0 : key_len));
    out.value = read_nullable(r);
    _bytes = _bytes.subspan(_bytes.size() - r.remaining());
    --_left;
    return r.ok();
}

bool record_reader::fail() {
    _error = errc::invalid_record;
    _left = 0;
    _pos = _end;
    return false;
}

bool record_reader::next(record_view& out) {
    if (_left <= 0) {
        return false;
    }
    wire::reader outer({_pos, static_cast<size_t>(_end - _pos)});
    int32_t length = outer.read_varint();
    if (!outer.ok() || length < min_record_body ||
        static_cast<size_t>(length) > outer.remaining()) {
        return fail();
    }
    const uint8_t* body_start = outer.position();
    wire::reader r({body_start, static_cast<size_t>(length)});
    out.attributes = r.read_i8();
    out.timestamp_delta = r.read_varlong();
    out.offset_delta = r.read_varint();
    out.key = read_nullable(r);
    out.value = read_nullable(r);
    int32_t header_count = r.read_varint();
    if (!r.ok() || header_count < 0 ||
        !r.can_hold(static_cast<uint64_t>(header_count), min_header_size)) {
        return fail();
    }
    const uint8_t* headers_start = r.position();
    for (int32_t i = 0; i < header_count; ++i) {
        int32_t key_len = r.read_varint();
        if (key_len < 0) {
            return fail();
        }
        r.skip(static_cast<size_t>(key_len));
        (void)read_nullable(r);
    }
    // The record must end exactly where its length says.
    if (!r.ok() || r.remaining() != 0) {
        return fail();
    }
    out.header_count = header_count;
    out.header_bytes = {headers_start, static_cast<size_t>(body_start + length - headers_start)};
    out.encoded = {_pos, static_cast<size_t>(body_start + length - _pos)};
    _pos = body_start + length;
    --_left;
    return true;
}

}  // namespace spool::protocol::records
