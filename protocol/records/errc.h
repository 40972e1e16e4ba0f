#pragma once

// Errors of the record-batch library. The batch parser, the record iterator and the codecs return
// these as std::error_code (no exceptions on the produce path). The Kafka handlers translate them
// with to_kafka_error_code(); the mapping follows Apache Kafka's LogValidator / ProduceRequest and
// is pinned by a test.

#include <cstdint>
#include <system_error>

namespace spool::protocol::records {

enum class errc : int {
    // Impossible batch length, truncated batch, CRC mismatch, unknown magic, undecodable
    // compressed stream: the bytes are damaged. Kafka: CORRUPT_MESSAGE (2).
    corrupt_message = 1,
    // Structurally sound batch with inconsistent contents: record count or offset deltas that do
    // not match, a control batch from a client, compression bits on an inner record, record-level
    // parse errors (bad varints, negative or oversized header counts). Kafka: INVALID_RECORD (87).
    invalid_record,
    // A magic 0 or 1 message set. Kafka 4.0 answers Produce v3+ carrying these with
    // INVALID_RECORD (ProduceRequest.validateRecords); kept distinct so the broker can log it.
    unsupported_magic,
    // A codec id outside 0..4. Kafka: UNSUPPORTED_COMPRESSION_TYPE (76).
    unsupported_compression,
    // The batch is larger than the caller's limit (max.message.bytes). Kafka: MESSAGE_TOO_LARGE
    // (10).
    message_too_large,
    // Decompression would exceed the caller's cap (a compression bomb, or simply too big).
    // Kafka has no exact equivalent; the batch is refused as MESSAGE_TOO_LARGE (10).
    decompressed_too_large,
};

const std::error_category& records_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), records_category()};
}

// Kafka error numbers this module can produce (protocol/errors.h has the full table).
namespace kafka_error {
inline constexpr int16_t none = 0;
inline constexpr int16_t corrupt_message = 2;
inline constexpr int16_t message_too_large = 10;
inline constexpr int16_t unknown_server_error = -1;
inline constexpr int16_t unsupported_compression_type = 76;
inline constexpr int16_t invalid_record = 87;
}  // namespace kafka_error

// The Kafka error code a Produce response carries for a batch rejected with e.
int16_t to_kafka_error_code(errc e) noexcept;

// Same for an error_code of any category: records errors are mapped, success is 0, anything else
// is UNKNOWN_SERVER_ERROR.
int16_t to_kafka_error_code(std::error_code ec) noexcept;

}  // namespace spool::protocol::records

template <>
struct std::is_error_code_enum<spool::protocol::records::errc> : std::true_type {};
