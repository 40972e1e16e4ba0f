// records_fuzz_seeds <dir>: writes the seed corpus for records_batch_fuzz, a few small batches
// from the builder (each codec, headers, null keys, a control batch, two concatenated batches).
// The checked-in corpus/ was made with it, plus the librdkafka captures from tests/data.

#include "protocol/records/batch_builder.h"

#include <fstream>
#include <string>

using namespace spool::protocol::records;

namespace {

void write(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> small_batch(compression codec, bool xerial = false) {
    batch_options o;
    o.codec = codec;
    o.codec_options.snappy_xerial = xerial;
    o.producer_id = 1;
    o.producer_epoch = 0;
    o.base_sequence = 0;
    batch_builder builder(o);
    const header_data headers[] = {{"h1", nullable_bytes::of("v1")},
                                   {"h2", nullable_bytes::null()}};
    builder.add(1000, nullable_bytes::of("key"), nullable_bytes::of("value"), headers);
    builder.add(1001, nullable_bytes::null(),
                nullable_bytes::of("second value, repeated repeated"));
    builder.add(1005, nullable_bytes::of("k3"), nullable_bytes::null());
    return builder.build();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        return 2;
    }
    std::string dir = argv[1];
    for (auto codec : {compression::none, compression::gzip, compression::snappy, compression::lz4,
                       compression::zstd}) {
        write(dir + "/seed-" + std::string(to_string(codec)), small_batch(codec));
    }
    write(dir + "/seed-snappy-xerial", small_batch(compression::snappy, true));
    std::vector<uint8_t> control;
    control_batch_options marker;
    marker.producer_id = 7;
    marker.producer_epoch = 1;
    (void)build_control_batch(control_type::commit, marker, control);
    write(dir + "/seed-control", control);
    auto two = small_batch(compression::none);
    auto second = small_batch(compression::lz4);
    two.insert(two.end(), second.begin(), second.end());
    write(dir + "/seed-two-batches", two);
    return 0;
}
