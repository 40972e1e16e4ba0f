// Cross-check against franz-go's kmsg, an independent codec: the Go tool (tools/kmsg-crosscheck)
// writes random requests and responses for every API at every version both codecs support;
// each must decode here and re-encode to the same bytes. Run through
// tools/kmsg-crosscheck/run.sh, which builds the tool and sets SPOOL_KMSG_TOOL.

#include "protocol/messages/all.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace spool::protocol {
namespace {

struct entry {
    bool response;
    int16_t key;
    int16_t version;
    std::vector<uint8_t> body;
};

std::vector<entry> read_corpus(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> all((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
    std::vector<entry> out;
    wire::reader r(all);
    while (r.remaining() > 0) {
        entry e;
        e.response = r.read_u8() != 0;
        e.key = r.read_i16();
        e.version = r.read_i16();
        auto body = r.read_bytes(r.read_u32());
        EXPECT_TRUE(r.ok()) << "corpus truncated";
        if (!r.ok()) {
            break;
        }
        e.body.assign(body.begin(), body.end());
        out.push_back(std::move(e));
    }
    return out;
}

// Decodes and re-encodes `e` with Message; returns an empty string on success.
template <class Message>
std::string check(const entry& e) {
    Message msg;
    wire::reader r(e.body);
    if (!msg.decode(r, e.version)) {
        return "decode failed: " + std::to_string(static_cast<int>(r.error()));
    }
    if (r.remaining() != 0) {
        return std::to_string(r.remaining()) + " bytes left after decode";
    }
    std::vector<uint8_t> again;
    wire::writer w(again);
    msg.encode(w, e.version);
    if (again != e.body) {
        return "re-encoded bytes differ";
    }
    if (msg.encoded_size(e.version) != again.size()) {
        return "encoded_size differs from bytes written";
    }
    return {};
}

template <class... P>
std::string dispatch(const entry& e, type_list<P...>) {
    std::string result = "unknown api key";
    (void)((static_cast<int16_t>(P::request::api) == e.key
                ? (result =
                       e.response ? check<typename P::response>(e) : check<typename P::request>(e),
                   true)
                : false) ||
           ...);
    return result;
}

TEST(kmsg_crosscheck, test_kmsg_messages_decode_and_reencode_byte_for_byte) {
    const char* tool = std::getenv("SPOOL_KMSG_TOOL");
    if (tool == nullptr) {
        GTEST_SKIP() << "SPOOL_KMSG_TOOL not set; run via tools/kmsg-crosscheck/run.sh";
    }
    std::string apis;
    for (const auto& info : supported_apis) {
        apis += (apis.empty() ? "" : ",") + std::to_string(static_cast<int>(info.key)) + ":" +
                std::to_string(info.min_version) + ":" + std::to_string(info.max_version);
    }
    std::string corpus = "/tmp/spool-kmsg-corpus-" + std::to_string(::getpid()) + ".bin";
    std::string cmd = std::string(tool) + " -out " + corpus + " -apis " + apis;
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    auto entries = read_corpus(corpus);
    std::remove(corpus.c_str());
    ASSERT_GT(entries.size(), 1000u);

    std::map<std::string, int> failures;
    for (const auto& e : entries) {
        std::string err = dispatch(e, all_apis{});
        if (!err.empty()) {
            std::string what = std::string(api_name(static_cast<api_key>(e.key))) +
                               (e.response ? "Response" : "Request") + " v" +
                               std::to_string(e.version) + ": " + err;
            ++failures[what];
        }
    }
    for (const auto& [what, count] : failures) {
        ADD_FAILURE() << what << " (" << count << " messages)";
    }
    std::cout << entries.size() << " kmsg messages checked\n";
}

}  // namespace
}  // namespace spool::protocol
