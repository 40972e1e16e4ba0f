// Request frames recorded from real clients (captures/<client>/<key>-<version>-<n>.bin, see
// captures/record.sh): each must parse, decode, and re-encode to the bytes the client sent.

#include "protocol/api/framing.h"
#include "protocol/messages/all.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace spool::protocol {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Empty string when the body decodes and re-encodes to the client's bytes. Bytes after the
// body are tolerated, as Kafka does (librdkafka 2.0.2 writes a spare tag byte in ListGroups v3+).
template <class Request>
std::string check_body(const request_view& req) {
    auto decoded = decode_request<Request>(req);
    if (!decoded.has_value()) {
        return "decode failed: " + decoded.error().message();
    }
    std::vector<uint8_t> again;
    wire::writer w(again);
    decoded.value().encode(w, req.version());
    if (again.size() > req.body.size() ||
        !std::equal(again.begin(), again.end(), req.body.begin())) {
        return "re-encoded body differs";
    }
    if (again.size() != req.body.size() && req.key() != api_key::list_groups) {
        return std::to_string(req.body.size() - again.size()) + " unexpected trailing bytes";
    }
    return {};
}

template <class... P>
std::string check(const request_view& req, type_list<P...>) {
    std::string result = "no codec";
    (void)((req.key() == P::request::api ? (result = check_body<typename P::request>(req), true)
                                         : false) ||
           ...);
    return result;
}

class captures : public ::testing::TestWithParam<std::string> {};

TEST_P(captures, test_client_requests_decode_and_reencode_byte_for_byte) {
    const fs::path dir = fs::path(SPOOL_CAPTURES_DIR) / GetParam();
    ASSERT_TRUE(fs::is_directory(dir)) << dir;
    std::set<std::string> apis;
    size_t frames = 0;
    for (const auto& file : fs::directory_iterator(dir)) {
        if (file.path().extension() != ".bin") {
            continue;
        }
        auto frame = read_file(file.path());
        wire::reader peek(frame);
        const int16_t key = peek.read_i16();
        if (find_api(key) == nullptr) {
            continue;  // an API this codec does not cover (the client may use more)
        }
        auto req = parse_request(frame);
        ASSERT_TRUE(req.has_value()) << file.path();
        // Header: re-encoding gives the client's header bytes.
        std::vector<uint8_t> header;
        wire::writer w(header);
        req.value().header.encode(w, req.value().header_version);
        EXPECT_TRUE(std::equal(header.begin(), header.end(), frame.begin())) << file.path();
        std::string err = check(req.value(), all_apis{});
        EXPECT_TRUE(err.empty()) << file.path().filename() << ": " << err;
        apis.insert(std::string(api_name(req.value().key())) + " v" +
                    std::to_string(req.value().version()));
        ++frames;
    }
    EXPECT_GT(frames, 3u);
    std::string seen;
    for (const auto& a : apis) {
        seen += a + ", ";
    }
    std::cout << GetParam() << ": " << frames << " frames: " << seen << "\n";
}

INSTANTIATE_TEST_SUITE_P(clients, captures,
                         ::testing::Values("kcat", "java", "java-groups", "kafkajs"));

}  // namespace
}  // namespace spool::protocol
