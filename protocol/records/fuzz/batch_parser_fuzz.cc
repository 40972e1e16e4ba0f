// libFuzzer target for the record-batch parser: any input is treated as a Produce partition's
// records (client rules) and as a log range (log rules), with and without CRC checking, so the
// fuzzer reaches the record walker and the codecs, not only the CRC comparison. Whatever
// validates must then iterate consistently, and the in-place rewrites must keep it valid.

#include "protocol/records/batch_parser.h"
#include "protocol/records/batch_rewrite.h"
#include "protocol/records/record_reader.h"

#include <cstdint>
#include <cstdlib>
#include <vector>

namespace {

using namespace spool::protocol::records;

void check(bool condition) {
    if (!condition) {
        std::abort();
    }
}

void walk_records(std::span<const uint8_t> records, const batch_info& info) {
    record_reader reader(records, info.record_count);
    record_view rv;
    int32_t seen = 0;
    while (reader.next(rv)) {
        auto headers = rv.headers();
        record_header_view hv;
        int32_t header_seen = 0;
        while (headers.next(hv)) {
            ++header_seen;
        }
        check(header_seen == rv.header_count);
        ++seen;
    }
    check(!reader.error() && seen == info.record_count);
}

void run(std::span<const uint8_t> input, const validate_options& options,
         decompress_buffer& scratch) {
    batch_walker walker(input, options, scratch);
    while (!walker.done()) {
        auto info = walker.next();
        if (!info) {
            return;
        }
        const batch_info& b = info.value();
        check(b.offset + b.size <= input.size());
        if (b.records_checked) {
            walk_records(b.is_compressed() ? scratch.data() : records_section(input, b), b);
        }
        // Rewrites outside the CRC keep a CRC-checked batch valid.
        if (options.verify_crc) {
            std::vector<uint8_t> copy(input.begin() + static_cast<ptrdiff_t>(b.offset),
                                      input.begin() + static_cast<ptrdiff_t>(b.offset + b.size));
            check(!set_partition_leader_epoch(copy, 5));
            check(!set_log_append_time(copy, 123));
            validate_options header_only = options;
            header_only.check_records = false;
            check(static_cast<bool>(validate_batch(copy, header_only)));
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static decompress_buffer scratch;
    std::span<const uint8_t> input(data, size);
    validate_options options;
    options.max_decompressed_size = 4 << 20;
    for (auto origin : {batch_origin::client, batch_origin::log}) {
        for (bool crc : {true, false}) {
            options.origin = origin;
            options.verify_crc = crc;
            run(input, options, scratch);
        }
    }
    return 0;
}
