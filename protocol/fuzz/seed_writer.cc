// Writes the fuzz seed corpus (protocol/fuzz/corpus/request): one random, valid request frame
// per API at its oldest, first flexible and newest versions. Run by hand after schema changes:
//
//     cmake --build build/<dir> --target protocol_fuzz_seeds
//     build/<dir>/protocol/fuzz/protocol_fuzz_seeds protocol/fuzz/corpus/request

#include "protocol/fuzz/request_dispatch.h"

#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <string>

namespace spool::protocol::fuzz {
namespace {

template <class Request>
void write_seeds(const std::string& dir, std::mt19937_64& rng) {
    std::set<int16_t> versions = {Request::min_version, Request::max_version};
    if (Request::first_flexible_version >= 0) {
        versions.insert(Request::first_flexible_version);
    }
    for (int16_t v : versions) {
        Request msg;
        msg.randomize(rng, v);
        auto frame = encode_request(1, std::string("seed"), v, msg);
        std::span<const uint8_t> body(frame.data() + 4, frame.size() - 4);
        if (!decode_request_frame(body)) {
            std::fprintf(stderr, "seed does not decode: %s v%d\n",
                         std::string(api_name(Request::api)).c_str(), v);
            std::exit(1);
        }
        std::ofstream out(
            dir + "/" + std::string(api_name(Request::api)) + "-v" + std::to_string(v),
            std::ios::binary);
        out.write(reinterpret_cast<const char*>(body.data()),
                  static_cast<std::streamsize>(body.size()));
    }
}

template <class... P>
void write_all(const std::string& dir, type_list<P...>) {
    std::mt19937_64 rng(42);
    (write_seeds<typename P::request>(dir, rng), ...);
}

}  // namespace
}  // namespace spool::protocol::fuzz

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
        return 2;
    }
    spool::protocol::fuzz::write_all(argv[1], spool::protocol::all_apis{});
    return 0;
}
