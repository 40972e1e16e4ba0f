// records_capture: writes librdkafka-<version>-<codec>.bin for every codec into a directory.
// Run once to refresh protocol/records/tests/data/ (see README there):
//   ./build/<dir>/protocol/records/tests/records_capture protocol/records/tests/data

#include "protocol/records/tests/rdkafka_capture.h"

#include <librdkafka/rdkafka.h>

#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <output-dir>\n", argv[0]);
        return 2;
    }
    for (const auto& codec : spool::protocol::records::testing::capture_codecs()) {
        std::string error;
        auto bytes = spool::protocol::records::testing::capture_librdkafka_batches(codec, error);
        if (bytes.empty()) {
            std::fprintf(stderr, "%s: %s\n", codec.c_str(), error.c_str());
            return 1;
        }
        std::string path =
            std::string(argv[1]) + "/librdkafka-" + rd_kafka_version_str() + "-" + codec + ".bin";
        std::ofstream(path, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size()));
        std::printf("%s: %zu bytes\n", path.c_str(), bytes.size());
    }
    return 0;
}
