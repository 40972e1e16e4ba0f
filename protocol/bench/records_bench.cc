// Record-batch hot paths on 1 MiB of uncompressed 1 KiB records (the produce path's work per
// MiB received), next to memcpy of the same bytes as the machine's reference bandwidth.

#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_parser.h"
#include "protocol/records/crc32c.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

namespace {

using namespace spool::protocol::records;

constexpr size_t mib = 1 << 20;
constexpr size_t record_size = 1024;

// 1 MiB of records: 1 KiB values with short keys, as a producer batches them.
const std::vector<uint8_t>& batch_of_1mib(compression codec = compression::none) {
    static std::vector<uint8_t> batches[max_codec_id + 1];
    auto& batch = batches[static_cast<size_t>(codec)];
    if (batch.empty()) {
        std::mt19937 rng(1);
        std::vector<uint8_t> value(record_size);
        batch_options options;
        options.codec = codec;
        batch_builder builder(options);
        for (size_t i = 0; i < mib / record_size; ++i) {
            // Text-like values: compressible, but not trivially.
            for (auto& b : value) {
                b = static_cast<uint8_t>('a' + rng() % 16);
            }
            std::string key = "key-" + std::to_string(i);
            builder.add(1'700'000'000'000 + static_cast<int64_t>(i), nullable_bytes::of(key),
                        nullable_bytes::of(value));
        }
        (void)builder.build(batch);
    }
    return batch;
}

void bm_memcpy_1mib(benchmark::State& state) {
    std::vector<uint8_t> src(mib, 1);
    std::vector<uint8_t> dst(mib);
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), mib);
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * mib));
}
BENCHMARK(bm_memcpy_1mib);

void bm_crc32c_1mib(benchmark::State& state) {
    const auto& batch = batch_of_1mib();
    std::span<const uint8_t> data(batch.data(), mib);
    for (auto _ : state) {
        benchmark::DoNotOptimize(crc32c(data));
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * mib));
    state.SetLabel(detail::crc32c_hardware_available() ? "sse4.2" : "table");
}
BENCHMARK(bm_crc32c_1mib);

void bm_crc32c_table_1mib(benchmark::State& state) {
    const auto& batch = batch_of_1mib();
    for (auto _ : state) {
        benchmark::DoNotOptimize(detail::crc32c_table(0, batch.data(), mib));
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * mib));
}
BENCHMARK(bm_crc32c_table_1mib);

// What a Produce request costs: header, CRC-32C and every record walked.
void bm_validate_batch_1mib(benchmark::State& state) {
    const auto& batch = batch_of_1mib();
    for (auto _ : state) {
        auto info = validate_batch(batch, {});
        if (!info) {
            state.SkipWithError("batch did not validate");
            break;
        }
        benchmark::DoNotOptimize(info.value().record_count);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * batch.size()));
}
BENCHMARK(bm_validate_batch_1mib);

// The record walk alone (CRC off), to see how the cost splits.
void bm_validate_records_only_1mib(benchmark::State& state) {
    const auto& batch = batch_of_1mib();
    validate_options o;
    o.verify_crc = false;
    for (auto _ : state) {
        auto info = validate_batch(batch, o);
        benchmark::DoNotOptimize(info.value().record_count);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * batch.size()));
}
BENCHMARK(bm_validate_records_only_1mib);

// Compressed batches: CRC, decompression into a reused buffer, record walk. Bytes are the
// uncompressed 1 MiB so the figures compare with the rows above.
void bm_validate_compressed_1mib(benchmark::State& state) {
    auto codec = static_cast<compression>(state.range(0));
    const auto& batch = batch_of_1mib(codec);
    decompress_buffer scratch;
    for (auto _ : state) {
        auto info = validate_batch_deep(batch, {}, scratch);
        if (!info) {
            state.SkipWithError("batch did not validate");
            break;
        }
        benchmark::DoNotOptimize(info.value().record_count);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * mib));
    state.SetLabel(std::string(to_string(codec)) + ", " + std::to_string(batch.size()) +
                   " bytes compressed");
}
BENCHMARK(bm_validate_compressed_1mib)
    ->Arg(static_cast<int>(compression::gzip))
    ->Arg(static_cast<int>(compression::snappy))
    ->Arg(static_cast<int>(compression::lz4))
    ->Arg(static_cast<int>(compression::zstd));

}  // namespace
