#pragma once

// The broker fuzzer's seeds, built from request frames already in the tree rather than checked
// in twice:
//   - every frame captured from a real client (protocol/tests/captures/<client>/<key>-<v>-<n>.bin)
//     as a one-request input;
//   - per client, one session input: its first two frames of each API in the order a client sends
//     them (ApiVersions, Metadata, CreateTopics, Produce, ..., groups, Fetch, DeleteTopics), so
//     the fuzzer starts from inputs that build state and then use it;
//   - every generated frame of protocol/fuzz/corpus/request (each API at its oldest, first
//     flexible and newest versions), for the APIs no client was captured sending.
//
// Threading: pure apart from reading the files.

#include <filesystem>
#include <string>
#include <vector>

namespace spool::tests::fuzz {

struct seed {
    std::string name;
    std::vector<uint8_t> input;  // in fuzz_session.h's format
};

// `captures`: the captures root (one folder per client); `frames`: a folder of bare frames.
std::vector<seed> build_seeds(const std::filesystem::path& captures,
                              const std::filesystem::path& frames);

// The file's bytes (empty when it cannot be read).
std::vector<uint8_t> read_bytes(const std::filesystem::path& file);

}  // namespace spool::tests::fuzz
