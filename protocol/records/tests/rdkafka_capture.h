#pragma once

// Captures record batches exactly as librdkafka writes them. The producer sends the sample
// records (sample_records.h) with a codec to librdkafka's in-process mock cluster, which stores
// the produced batches verbatim (it only rewrites the base offset, outside the CRC); the bytes
// are then read back with a hand-written Fetch v4 request over a plain TCP socket, so no client
// decoding stands between the producer's bytes and our parser. The mock cluster is librdkafka's
// own test broker, used here because the point is the client's encoding, not a broker.
//
// The other direction, consume_with_librdkafka, checks our encoder against the client's
// decoder: a batch we built goes into the mock cluster through a hand-written Produce v3
// request, and a librdkafka consumer (check.crcs=true) reads the records back.

#include "protocol/records/tests/sample_records.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace spool::protocol::records::testing {

inline const std::vector<std::string>& capture_codecs() {
    static const std::vector<std::string> codecs = {"none", "gzip", "snappy", "lz4", "zstd"};
    return codecs;
}

// Returns the partition's concatenated record batches, or an empty vector with error set.
std::vector<uint8_t> capture_librdkafka_batches(const std::string& codec, std::string& error);

// Produces `batches` (record batches with base offset 0) to a fresh mock cluster and returns
// what a librdkafka consumer reads, or nullopt with error set.
std::optional<std::vector<sample_record>> consume_with_librdkafka(
    const std::vector<uint8_t>& batches, size_t expected_records, std::string& error);

}  // namespace spool::protocol::records::testing
