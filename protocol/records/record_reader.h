#pragma once

// Zero-copy decoding of the records inside a v2 batch (see batch_format.h for the layout). The
// views point into the caller's buffer: the batch bytes for an uncompressed batch, or the
// decompress_buffer for a compressed one, which must outlive them.
//
// Every length is checked against the bytes that are left before it is used; a record that does
// not parse exactly (a varint running past the record, a length that disagrees with the fields,
// a negative or oversized header count) stops the reader with errc::invalid_record. Nothing here
// allocates.
//
// Threading: a reader is a cursor used by one thread.

#include "protocol/records/batch_format.h"

#include <cstdint>
#include <span>
#include <string_view>
#include <system_error>

namespace spool::protocol::records {

struct record_header_view {
    std::string_view key;
    nullable_bytes value;
};

// Iterates headers a record_reader has already validated.
class header_iterator {
public:
    header_iterator() = default;
    header_iterator(std::span<const uint8_t> bytes, int32_t count) : _bytes(bytes), _left(count) {}

    // Decodes the next header into out; false after the last one.
    bool next(record_header_view& out);
    int32_t remaining() const { return _left; }

private:
    std::span<const uint8_t> _bytes;
    int32_t _left = 0;
};

struct record_view {
    int8_t attributes = 0;
    int64_t timestamp_delta = 0;
    int32_t offset_delta = 0;
    nullable_bytes key;
    nullable_bytes value;
    int32_t header_count = 0;
    std::span<const uint8_t> header_bytes;  // the encoded headers, already validated
    std::span<const uint8_t> encoded;       // the whole record including its length prefix

    header_iterator headers() const { return {header_bytes, header_count}; }
};

class record_reader {
public:
    // records: the records section of a batch; count: the batch's records_count.
    record_reader(std::span<const uint8_t> records, int32_t count)
        : _pos(records.data()),
          _end(records.data() + records.size()),
          _left(count < 0 ? 0 : count) {}

    // Decodes the next record into out. Returns false once count records were read or on error;
    // error() tells which.
    bool next(record_view& out);

    [[nodiscard]] std::error_code error() const { return _error; }
    // Records still expected by the count.
    int32_t records_left() const { return _left; }
    // Bytes after the last record read.
    size_t bytes_left() const { return static_cast<size_t>(_end - _pos); }

private:
    bool fail();

    const uint8_t* _pos;
    const uint8_t* _end;
    int32_t _left;
    std::error_code _error;
};

}  // namespace spool::protocol::records
