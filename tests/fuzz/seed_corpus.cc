#include "tests/fuzz/seed_corpus.h"

#include "tests/fuzz/fuzz_session.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <tuple>

namespace spool::tests::fuzz {

namespace fs = std::filesystem;

namespace {

// Api keys in the order a producing and consuming client sends them; the rest go last.
constexpr int session_order[] = {18, 3,  19, 37, 22, 0,  2,  23, 10, 11, 14, 9, 1,
                                 8,  12, 32, 44, 60, 75, 15, 16, 42, 13, 21, 20};

int rank(int key) {
    auto it = std::find(std::begin(session_order), std::end(session_order), key);
    return it == std::end(session_order) ? 1000 + key : int(it - std::begin(session_order));
}

std::vector<fs::path> sorted_files(const fs::path& dir) {
    std::vector<fs::path> files;
    if (fs::is_directory(dir)) {
        for (const auto& e : fs::directory_iterator(dir)) {
            if (e.is_regular_file()) {
                files.push_back(e.path());
            }
        }
    }
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace

std::vector<uint8_t> read_bytes(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<seed> build_seeds(const fs::path& captures, const fs::path& frames) {
    std::vector<seed> seeds;
    std::vector<fs::path> clients;
    if (fs::is_directory(captures)) {
        for (const auto& e : fs::directory_iterator(captures)) {
            if (e.is_directory()) {
                clients.push_back(e.path());
            }
        }
    }
    std::sort(clients.begin(), clients.end());
    for (const auto& dir : clients) {
        const std::string client = dir.filename().string();
        // (rank, key, n): the first two frames of each API, in session order.
        std::map<std::tuple<int, int, int>, std::vector<uint8_t>> first_per_api;
        for (const auto& f : sorted_files(dir)) {
            if (f.extension() != ".bin") {
                continue;
            }
            auto frame = read_bytes(f);
            seeds.push_back({client + "-" + f.stem().string(), join_frames({frame})});
            int key = std::stoi(f.stem().string());  // "<key>-<version>-<n>"
            int n = std::stoi(f.stem().string().substr(f.stem().string().rfind('-') + 1));
            if (n < 2) {
                first_per_api.try_emplace({rank(key), key, n}, std::move(frame));
            }
        }
        std::vector<std::vector<uint8_t>> session;
        for (auto& [_, frame] : first_per_api) {
            session.push_back(std::move(frame));
        }
        if (!session.empty()) {
            seeds.push_back({client + "-session", join_frames(session)});
        }
    }
    for (const auto& f : sorted_files(frames)) {
        seeds.push_back({"generated-" + f.filename().string(), join_frames({read_bytes(f)})});
    }
    return seeds;
}

}  // namespace spool::tests::fuzz
