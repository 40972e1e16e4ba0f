#pragma once

// Appends big-endian fixed-width integers and varints to a byte vector. Encoders compute the
// exact size first (see the generated encoded_size() functions) and reserve once, so a response
// is built with one allocation.
//
// Zero-copy records: a writer may carry a splice list. Writing a file slice then appends nothing
// to the buffer and records (buffer position, slice) instead; the network layer sends
//
//     buffer[0, s0.at) | sendfile(s0.slice) | buffer[s0.at, s1.at) | sendfile(s1.slice) | ...
//
// Without a splice list the slice's bytes are read into the buffer (tests, small responses).
//
// Threading: a writer is owned by one encode call; it borrows the vector and the splice list.

#include "common/file_slice.h"

#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace spool::protocol::wire {

// A file slice to send after the first `at` buffer bytes (and after earlier splices).
struct splice {
    size_t at = 0;
    file_slice slice;
};

class writer {
public:
    explicit writer(std::vector<uint8_t>& out, std::vector<splice>* splices = nullptr)
        : _out(out), _splices(splices) {}

    // Where file slices go; nullptr when the caller wants their bytes copied into the buffer.
    std::vector<splice>* splices() const { return _splices; }
    // Only when splices() is set: the slice goes after the bytes written so far.
    void add_splice(const file_slice& s) { _splices->push_back(splice{_out.size(), s}); }

    std::vector<uint8_t>& buffer() { return _out; }
    size_t size() const { return _out.size(); }

    void write_u8(uint8_t v) { _out.push_back(v); }
    void write_i8(int8_t v) { write_u8(static_cast<uint8_t>(v)); }
    void write_i16(int16_t v) { write_fixed(static_cast<uint16_t>(v)); }
    void write_u16(uint16_t v) { write_fixed(v); }
    void write_i32(int32_t v) { write_fixed(static_cast<uint32_t>(v)); }
    void write_u32(uint32_t v) { write_fixed(v); }
    void write_i64(int64_t v) { write_fixed(static_cast<uint64_t>(v)); }
    void write_bool(bool v) { write_u8(v ? 1 : 0); }
    void write_f64(double d) {
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        write_fixed(bits);
    }

    void write_uvarint(uint64_t v) {
        while (v >= 0x80) {
            _out.push_back(static_cast<uint8_t>(v | 0x80));
            v >>= 7;
        }
        _out.push_back(static_cast<uint8_t>(v));
    }
    void write_varint(int32_t v) {
        write_uvarint(static_cast<uint32_t>((static_cast<uint32_t>(v) << 1) ^
                                            static_cast<uint32_t>(v >> 31)));
    }
    void write_varlong(int64_t v) {
        write_uvarint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
    }

    void write_bytes(std::span<const uint8_t> bytes) {
        _out.insert(_out.end(), bytes.begin(), bytes.end());
    }
    void write_raw(std::string_view s) { _out.insert(_out.end(), s.begin(), s.end()); }

    // Reserves n bytes to be filled later (e.g. a length prefix) and returns their offset.
    size_t reserve_placeholder(size_t n) {
        size_t at = _out.size();
        _out.resize(at + n);
        return at;
    }
    void patch_i32(size_t at, int32_t v) {
        auto u = static_cast<uint32_t>(v);
        _out[at] = static_cast<uint8_t>(u >> 24);
        _out[at + 1] = static_cast<uint8_t>(u >> 16);
        _out[at + 2] = static_cast<uint8_t>(u >> 8);
        _out[at + 3] = static_cast<uint8_t>(u);
    }

    static constexpr size_t uvarint_size(uint64_t v) {
        size_t n = 1;
        while (v >= 0x80) {
            v >>= 7;
            ++n;
        }
        return n;
    }
    static constexpr size_t varint_size(int32_t v) {
        return uvarint_size(static_cast<uint32_t>((static_cast<uint32_t>(v) << 1) ^
                                                  static_cast<uint32_t>(v >> 31)));
    }
    static constexpr size_t varlong_size(int64_t v) {
        return uvarint_size((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
    }

private:
    template <class T>
    void write_fixed(T v) {
        for (int shift = (sizeof(T) - 1) * 8; shift >= 0; shift -= 8) {
            _out.push_back(static_cast<uint8_t>(v >> shift));
        }
    }

    std::vector<uint8_t>& _out;
    std::vector<splice>* _splices;
};

}  // namespace spool::protocol::wire
