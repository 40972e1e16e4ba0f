#pragma once

// Bounds-checked reader over one received frame. Every read checks the remaining bytes first;
// on underflow or a malformed varint the reader enters a sticky failed state, returns zero values
// from then on, and the caller checks ok() once at the end of a decode. Nothing is ever read past
// the frame, and callers never size an allocation from a wire count without first asking
// can_hold(count, min_element_size).
//
// Threading: a reader is a cursor owned by one decode call; the bytes it views must outlive it.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace spool::protocol::wire {

enum class read_error : uint8_t {
    none = 0,
    underflow,            // a field runs past the end of the frame
    bad_varint,           // a varint longer than its type allows
    bad_length,           // a negative length that is not the null marker, or a count too large
    unsupported_value,    // a value the decoder refuses
    unexpected_null,      // a null string, bytes or array where this version does not allow one
    unsupported_version,  // the message has no such version
    too_large,            // the decoded message would take more memory than its budget
};

class reader {
public:
    reader() = default;
    explicit reader(std::span<const uint8_t> bytes)
        : _data(bytes.data()), _end(bytes.data() + bytes.size()) {}
    // A reader over part of the parent's bytes (a tagged field) that charges the parent's budget.
    reader(std::span<const uint8_t> bytes, const reader& parent)
        : _data(bytes.data()),
          _end(bytes.data() + bytes.size()),
          _memory_left(parent._memory_left) {}

    // Memory budget of the decoded message beyond the bytes it copies out of the frame.
    // Counts that fit in the frame may still expand: an empty string is one byte on the wire
    // and 32 in a std::vector<std::string>, so a 5 MB frame could decode to 160 MB. Decoders
    // charge each array's elements before reserving them; past the budget the decode fails
    // with too_large. `left` is owned by the caller and outlives the reader; null: unlimited.
    void limit_memory(size_t* left) { _memory_left = left; }
    [[nodiscard]] bool charge(uint64_t count, size_t element_size) {
        if (_memory_left == nullptr) {
            return true;
        }
        if (element_size != 0 && count > *_memory_left / element_size) {
            fail(read_error::too_large);
            return false;
        }
        *_memory_left -= static_cast<size_t>(count) * element_size;
        return true;
    }

    [[nodiscard]] bool ok() const { return _error == read_error::none; }
    [[nodiscard]] read_error error() const { return _error; }
    [[nodiscard]] size_t remaining() const { return static_cast<size_t>(_end - _data); }
    [[nodiscard]] const uint8_t* position() const { return _data; }
    [[nodiscard]] std::span<const uint8_t> rest() const { return {_data, remaining()}; }

    void fail(read_error e) {
        if (_error == read_error::none) {
            _error = e;
        }
        _data = _end;
    }

    // True when count elements of at least min_size bytes each could still fit in the frame.
    // Decoders call this before reserving space for an array, so a claimed count never turns
    // into an allocation larger than the frame itself.
    [[nodiscard]] bool can_hold(uint64_t count, size_t min_size = 1) {
        if (min_size == 0) {
            min_size = 1;
        }
        if (count > remaining() / min_size) {
            fail(read_error::bad_length);
            return false;
        }
        return true;
    }

    uint8_t read_u8() { return read_fixed<uint8_t>(); }
    int8_t read_i8() { return static_cast<int8_t>(read_fixed<uint8_t>()); }
    int16_t read_i16() { return static_cast<int16_t>(read_fixed<uint16_t>()); }
    uint16_t read_u16() { return read_fixed<uint16_t>(); }
    int32_t read_i32() { return static_cast<int32_t>(read_fixed<uint32_t>()); }
    uint32_t read_u32() { return read_fixed<uint32_t>(); }
    int64_t read_i64() { return static_cast<int64_t>(read_fixed<uint64_t>()); }
    bool read_bool() { return read_u8() != 0; }

    double read_f64() {
        uint64_t bits = read_fixed<uint64_t>();
        double d;
        std::memcpy(&d, &bits, sizeof d);
        return d;
    }

    // Unsigned LEB128 varint as used for compact lengths and tagged fields (at most 5 bytes).
    uint32_t read_uvarint() {
        uint64_t v = read_uvarint_impl(5);
        if (v > UINT32_MAX) {
            fail(read_error::bad_varint);
            return 0;
        }
        return static_cast<uint32_t>(v);
    }
    uint64_t read_uvarlong() { return read_uvarint_impl(10); }

    // Zig-zag varints as used inside records.
    int32_t read_varint() {
        uint32_t raw = read_uvarint();
        return static_cast<int32_t>((raw >> 1) ^ (~(raw & 1) + 1));
    }
    int64_t read_varlong() {
        uint64_t raw = read_uvarlong();
        return static_cast<int64_t>((raw >> 1) ^ (~(raw & 1) + 1));
    }

    // Returns a view of the next n bytes, or an empty span (and failure) when they are not there.
    std::span<const uint8_t> read_bytes(size_t n) {
        if (n > remaining()) {
            fail(read_error::underflow);
            return {};
        }
        std::span<const uint8_t> out(_data, n);
        _data += n;
        return out;
    }

    std::string_view read_string_view(size_t n) {
        auto bytes = read_bytes(n);
        return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
    }

    void skip(size_t n) { (void)read_bytes(n); }

private:
    template <class T>
    T read_fixed() {
        if (remaining() < sizeof(T)) {
            fail(read_error::underflow);
            return 0;
        }
        T v = 0;
        for (size_t i = 0; i < sizeof(T); ++i) {
            v = static_cast<T>((v << 8) | _data[i]);
        }
        _data += sizeof(T);
        return v;
    }

    uint64_t read_uvarint_impl(int max_bytes) {
        uint64_t value = 0;
        for (int i = 0; i < max_bytes; ++i) {
            if (_data == _end) {
                fail(read_error::underflow);
                return 0;
            }
            uint8_t b = *_data++;
            value |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
            if ((b & 0x80) == 0) {
                return value;
            }
        }
        fail(read_error::bad_varint);
        return 0;
    }

    const uint8_t* _data = nullptr;
    const uint8_t* _end = nullptr;
    size_t* _memory_left = nullptr;
    read_error _error = read_error::none;
};

}  // namespace spool::protocol::wire
