#include "protocol/records/tests/sample_records.h"

#include "protocol/records/batch_rewrite.h"
#include "protocol/records/record_reader.h"
#include "protocol/wire/writer.h"

#include <gtest/gtest.h>

namespace spool::protocol::records::testing {

namespace {

std::optional<std::string> to_optional(const nullable_bytes& b) {
    if (b.is_null) {
        return std::nullopt;
    }
    return std::string(b.as_string());
}

nullable_bytes to_nullable(const std::optional<std::string>& s) {
    return s ? nullable_bytes::of(std::string_view(*s)) : nullable_bytes::null();
}

}  // namespace

std::vector<sample_record> sample_records(size_t count) {
    std::vector<sample_record> out;
    for (size_t i = 0; i < count; ++i) {
        sample_record r;
        r.timestamp = 1'700'000'000'000 + static_cast<int64_t>(i) * 10;
        if (i % 7 != 3) {
            r.key = "key-" + std::to_string(i);
        }
        if (i % 11 == 5) {
            r.value = std::nullopt;
        } else {
            std::string v = "value-" + std::to_string(i) + ":";
            for (size_t k = 0; k < i % 13; ++k) {
                v += " the quick brown fox jumps over the lazy dog";
            }
            r.value = v;
        }
        if (i % 4 == 0) {
            r.headers.push_back({"trace", "id-" + std::to_string(i)});
        }
        if (i % 10 == 0) {
            r.headers.push_back({"empty", std::string()});
        }
        if (i % 15 == 0) {
            r.headers.push_back({"null", std::nullopt});
        }
        out.push_back(std::move(r));
    }
    return out;
}

std::vector<uint8_t> build_batch(const std::vector<sample_record>& records,
                                 const batch_options& options) {
    batch_builder builder(options);
    std::vector<header_data> headers;
    for (const auto& r : records) {
        headers.clear();
        for (const auto& h : r.headers) {
            headers.push_back({h.key, to_nullable(h.value)});
        }
        builder.add(r.timestamp, to_nullable(r.key), to_nullable(r.value), headers);
    }
    std::vector<uint8_t> out;
    EXPECT_FALSE(builder.build(out));
    return out;
}

std::vector<sample_record> decode_all(std::span<const uint8_t> buffer,
                                      const validate_options& options) {
    std::vector<sample_record> out;
    decompress_buffer scratch;
    batch_walker walker(buffer, options, scratch);
    while (!walker.done()) {
        auto info = walker.next();
        EXPECT_TRUE(info) << info.error().message();
        if (!info) {
            return out;
        }
        auto records =
            info.value().is_compressed() ? scratch.data() : records_section(buffer, info.value());
        record_reader reader(records, info.value().record_count);
        record_view rv;
        while (reader.next(rv)) {
            sample_record r;
            r.timestamp = info.value().base_timestamp + rv.timestamp_delta;
            r.key = to_optional(rv.key);
            r.value = to_optional(rv.value);
            auto headers = rv.headers();
            record_header_view hv;
            while (headers.next(hv)) {
                r.headers.push_back({std::string(hv.key), to_optional(hv.value)});
            }
            out.push_back(std::move(r));
        }
        EXPECT_FALSE(reader.error());
    }
    return out;
}

std::vector<uint8_t> wrap_records(std::span<const uint8_t> records, int32_t count,
                                  int32_t last_offset_delta, int16_t attributes,
                                  int64_t base_offset) {
    std::vector<uint8_t> out;
    wire::writer w(out);
    w.write_i64(base_offset);
    w.write_i32(static_cast<int32_t>(batch_header_size - log_overhead + records.size()));
    w.write_i32(-1);
    w.write_i8(current_magic);
    w.write_u32(0);
    w.write_i16(attributes);
    w.write_i32(last_offset_delta);
    w.write_i64(1000);
    w.write_i64(1000);
    w.write_i64(-1);
    w.write_i16(-1);
    w.write_i32(-1);
    w.write_i32(count);
    w.write_bytes(records);
    EXPECT_FALSE(update_crc(out));
    return out;
}

bool operator==(const sample_header& a, const sample_header& b) {
    return a.key == b.key && a.value == b.value;
}

bool operator==(const sample_record& a, const sample_record& b) {
    return a.timestamp == b.timestamp && a.key == b.key && a.value == b.value &&
           a.headers == b.headers;
}

}  // namespace spool::protocol::records::testing
