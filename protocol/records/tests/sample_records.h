#pragma once

// A deterministic set of records used by the round-trip tests, the librdkafka capture and its
// checked-in data: varied keys (some null), values of different sizes and compressibility, and
// headers (some with null or empty values).

#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_parser.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spool::protocol::records::testing {

struct sample_header {
    std::string key;
    std::optional<std::string> value;
};

struct sample_record {
    int64_t timestamp = 0;
    std::optional<std::string> key;
    std::optional<std::string> value;
    std::vector<sample_header> headers;
};

std::vector<sample_record> sample_records(size_t count = 120);

// Builds one batch from records with the given options.
std::vector<uint8_t> build_batch(const std::vector<sample_record>& records,
                                 const batch_options& options = {});

// Decodes the records of every batch in buffer (decompressing as needed), in order. Fails the
// calling test on any error.
std::vector<sample_record> decode_all(std::span<const uint8_t> buffer,
                                      const validate_options& options);

// Builds the records section by hand and wraps it in a v2 header with a correct CRC, so tests
// can craft batches the builder would never write.
std::vector<uint8_t> wrap_records(std::span<const uint8_t> records, int32_t count,
                                  int32_t last_offset_delta, int16_t attributes = 0,
                                  int64_t base_offset = 0);

bool operator==(const sample_header& a, const sample_header& b);
bool operator==(const sample_record& a, const sample_record& b);

}  // namespace spool::protocol::records::testing
