#pragma once

// The value of a Kafka `records` field (Produce requests, Fetch responses): a length-prefixed,
// possibly null run of record batches that the codec never parses (protocol/records does).
//
// Decoding yields a borrowed view into the frame: no copy, and the frame must outlive the
// message. Encoding concatenates parts in order: borrowed views, owned buffers and file slices.
// File slices are spliced (see wire::writer) so a Fetch response sends log segments with
// sendfile; their length still counts in the length prefix and in encoded_size().
//
//     non-flexible: int32 length (-1 = null) | bytes
//     flexible:     uvarint (length + 1) (0 = null) | bytes
//
// Fetch partitions should carry empty (not null) records: a default-constructed records_field
// is empty and non-null.
//
// A value type owned by its message; borrowed views and file handles follow their owners'
// lifetimes as documented above. No threading concerns.

#include "common/file_slice.h"
#include "protocol/wire/reader.h"
#include "protocol/wire/writer.h"

#include <cstdint>
#include <span>
#include <variant>
#include <vector>

namespace spool::protocol {

class records_field {
public:
    records_field() = default;

    static records_field null_value() {
        records_field r;
        r._null = true;
        return r;
    }
    // Borrows `bytes`; the caller keeps them alive until the message is encoded or dropped.
    static records_field view(std::span<const uint8_t> bytes) {
        records_field r;
        r.append_view(bytes);
        return r;
    }

    void set_null() {
        clear();
        _null = true;
    }
    void clear() {
        _null = false;
        _view = {};
        _parts.clear();
        _size = 0;
    }
    void append_view(std::span<const uint8_t> bytes);
    void append_owned(std::vector<uint8_t> bytes);
    void append_slice(const file_slice& slice);

    [[nodiscard]] bool is_null() const { return _null; }
    // Total length in bytes (0 when null).
    [[nodiscard]] size_t size() const { return _size; }
    [[nodiscard]] bool empty() const { return _size == 0; }
    // The bytes when they are one in-memory run (always so after decode); empty otherwise.
    [[nodiscard]] std::span<const uint8_t> bytes() const;
    [[nodiscard]] bool has_file_slices() const;

    // Codec entry points used by generated code. `nullable` says whether this version may carry
    // a null; a null value in a version that may not is encoded as empty.
    [[nodiscard]] bool decode(wire::reader& r, bool flexible, bool nullable);
    void encode(wire::writer& w, bool flexible, bool nullable) const;
    [[nodiscard]] size_t encoded_size(bool flexible, bool nullable) const;

    // Equal when both are null, or both hold the same bytes; file slices compare by identity
    // (same file, offset and length) rather than by content.
    bool operator==(const records_field& other) const;

private:
    using part = std::variant<std::span<const uint8_t>, std::vector<uint8_t>, file_slice>;

    void write_parts(wire::writer& w) const;

    bool _null = false;
    std::span<const uint8_t> _view;  // the first part when it is a view: decode needs no vector
    std::vector<part> _parts;        // parts after _view
    size_t _size = 0;
};

}  // namespace spool::protocol
