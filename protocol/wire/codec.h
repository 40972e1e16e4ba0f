#pragma once

// Wire encodings of Kafka's variable-length types, shared by all generated codecs:
//
//     string   classic: int16 length (-1 = null) | bytes     compact: uvarint(length+1) | bytes
//     bytes    classic: int32 length (-1 = null) | bytes     compact: uvarint(length+1) | bytes
//     array    classic: int32 count  (-1 = null) | elements  compact: uvarint(count+1) | elements
//     uuid     16 bytes
//
// Readers fail (sticky, see reader.h) on a length that runs past the frame before allocating
// anything; a null where the version does not allow one fails with unexpected_null. Writers
// given a null where the version has no null encode an empty value instead.

#include "protocol/wire/reader.h"
#include "protocol/wire/records_field.h"
#include "protocol/wire/tagged_fields.h"
#include "protocol/wire/uuid.h"
#include "protocol/wire/writer.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spool::protocol::wire {

inline constexpr size_t uvarint_size(uint64_t v) {
    return writer::uvarint_size(v);
}

// Length prefix of a string/bytes/array; -1 for null. Fails on a classic length below -1 and on
// a compact length that does not fit int32.
inline int64_t read_length(reader& r, bool flexible, bool two_byte) {
    int64_t n;
    if (flexible) {
        n = static_cast<int64_t>(r.read_uvarint()) - 1;
        if (n > INT32_MAX) {
            r.fail(read_error::bad_length);
            return 0;
        }
    } else {
        n = two_byte ? r.read_i16() : r.read_i32();
    }
    if (n < -1) {
        r.fail(read_error::bad_length);
        return 0;
    }
    return r.ok() ? n : 0;
}

inline void write_length(writer& w, bool flexible, bool two_byte, int64_t n) {
    if (flexible) {
        w.write_uvarint(static_cast<uint64_t>(n + 1));
    } else if (two_byte) {
        w.write_i16(static_cast<int16_t>(n));
    } else {
        w.write_i32(static_cast<int32_t>(n));
    }
}

inline size_t length_size(bool flexible, bool two_byte, int64_t n) {
    return flexible ? uvarint_size(static_cast<uint64_t>(n + 1)) : (two_byte ? 2 : 4);
}

// ---- strings

inline bool read_string(reader& r, bool flexible, std::string& out) {
    int64_t n = read_length(r, flexible, true);
    if (n < 0) {
        r.fail(read_error::unexpected_null);
        return false;
    }
    auto s = r.read_string_view(static_cast<size_t>(n));
    out.assign(s);
    return r.ok();
}

inline bool read_nullable_string(reader& r, bool flexible, bool nullable,
                                 std::optional<std::string>& out) {
    int64_t n = read_length(r, flexible, true);
    if (n < 0) {
        if (!r.ok() || !nullable) {
            r.fail(read_error::unexpected_null);
            return false;
        }
        out.reset();
        return true;
    }
    auto s = r.read_string_view(static_cast<size_t>(n));
    out.emplace(s);
    return r.ok();
}

inline void write_string(writer& w, bool flexible, std::string_view s) {
    write_length(w, flexible, true, static_cast<int64_t>(s.size()));
    w.write_raw(s);
}

inline void write_nullable_string(writer& w, bool flexible, bool nullable,
                                  const std::optional<std::string>& s) {
    if (!s && nullable) {
        write_length(w, flexible, true, -1);
        return;
    }
    write_string(w, flexible, s ? std::string_view(*s) : std::string_view());
}

inline size_t string_size(bool flexible, std::string_view s) {
    return length_size(flexible, true, static_cast<int64_t>(s.size())) + s.size();
}

inline size_t nullable_string_size(bool flexible, bool nullable,
                                   const std::optional<std::string>& s) {
    if (!s && nullable) {
        return length_size(flexible, true, -1);
    }
    return string_size(flexible, s ? std::string_view(*s) : std::string_view());
}

// ---- bytes

inline bool read_bytes(reader& r, bool flexible, std::vector<uint8_t>& out) {
    int64_t n = read_length(r, flexible, false);
    if (n < 0) {
        r.fail(read_error::unexpected_null);
        return false;
    }
    auto b = r.read_bytes(static_cast<size_t>(n));
    out.assign(b.begin(), b.end());
    return r.ok();
}

inline bool read_nullable_bytes(reader& r, bool flexible, bool nullable,
                                std::optional<std::vector<uint8_t>>& out) {
    int64_t n = read_length(r, flexible, false);
    if (n < 0) {
        if (!r.ok() || !nullable) {
            r.fail(read_error::unexpected_null);
            return false;
        }
        out.reset();
        return true;
    }
    auto b = r.read_bytes(static_cast<size_t>(n));
    out.emplace(b.begin(), b.end());
    return r.ok();
}

inline void write_bytes(writer& w, bool flexible, std::span<const uint8_t> b) {
    write_length(w, flexible, false, static_cast<int64_t>(b.size()));
    w.write_bytes(b);
}

inline void write_nullable_bytes(writer& w, bool flexible, bool nullable,
                                 const std::optional<std::vector<uint8_t>>& b) {
    if (!b && nullable) {
        write_length(w, flexible, false, -1);
        return;
    }
    write_bytes(w, flexible, b ? std::span<const uint8_t>(*b) : std::span<const uint8_t>());
}

inline size_t bytes_size(bool flexible, std::span<const uint8_t> b) {
    return length_size(flexible, false, static_cast<int64_t>(b.size())) + b.size();
}

inline size_t nullable_bytes_size(bool flexible, bool nullable,
                                  const std::optional<std::vector<uint8_t>>& b) {
    if (!b && nullable) {
        return length_size(flexible, false, -1);
    }
    return bytes_size(flexible, b ? std::span<const uint8_t>(*b) : std::span<const uint8_t>());
}

// ---- arrays

inline int32_t read_array_length(reader& r, bool flexible) {
    return static_cast<int32_t>(read_length(r, flexible, false));
}
inline void write_array_length(writer& w, bool flexible, int32_t n) {
    write_length(w, flexible, false, n);
}
inline size_t array_length_size(bool flexible, int32_t n) {
    return length_size(flexible, false, n);
}

// How many elements to reserve for a claimed count: never more memory than the bytes left in
// the frame, so a crafted count cannot turn into a large allocation. Real elements beyond that
// grow the vector as they are decoded (each consumed frame bytes).
template <class T>
size_t bounded_reserve(int32_t count, size_t remaining) {
    size_t by_memory = remaining / sizeof(T) + 1;
    return std::min(static_cast<size_t>(count), by_memory);
}

template <class T>
const std::vector<T>& empty_vector() {
    static const std::vector<T> empty;
    return empty;
}

// ---- uuid

inline uuid read_uuid(reader& r) {
    uuid u;
    auto b = r.read_bytes(16);
    if (b.size() == 16) {
        std::copy(b.begin(), b.end(), u.bytes.begin());
    }
    return u;
}
inline void write_uuid(writer& w, const uuid& u) {
    w.write_bytes(u.bytes);
}

}  // namespace spool::protocol::wire
