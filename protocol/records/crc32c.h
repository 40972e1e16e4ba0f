#pragma once

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of Kafka record batch v2.
//
// crc32c() picks an implementation once per process: the SSE4.2 crc32 instruction, 8 bytes at a
// time on three interleaved streams (the instruction has a 3-cycle latency and 1-cycle
// throughput, so three independent chains keep the unit busy; the partial CRCs are merged with
// precomputed "append N zero bytes" tables), or a slice-by-8 table on CPUs without SSE4.2.
//
// Thread-safe: pure functions over caller-owned bytes; the tables are built once on first use.

#include <cstddef>
#include <cstdint>
#include <span>

namespace spool::protocol::records {

// CRC-32C of bytes, continuing from crc (the value a previous call returned; 0 to start).
uint32_t crc32c_extend(uint32_t crc, const uint8_t* data, size_t size) noexcept;

inline uint32_t crc32c(std::span<const uint8_t> bytes) noexcept {
    return crc32c_extend(0, bytes.data(), bytes.size());
}

namespace detail {
// The two implementations, exposed for tests and benchmarks. crc32c_hardware must only be called
// when crc32c_hardware_available() is true.
uint32_t crc32c_table(uint32_t crc, const uint8_t* data, size_t size) noexcept;
uint32_t crc32c_hardware(uint32_t crc, const uint8_t* data, size_t size) noexcept;
bool crc32c_hardware_available() noexcept;
}  // namespace detail

}  // namespace spool::protocol::records
