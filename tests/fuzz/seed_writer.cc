// Writes the broker fuzzer's seed inputs (seed_corpus.h) into a folder; ctest runs it before the
// fuzzer, so the seeds always follow the captures and generated frames in the tree.
//
//     broker_fuzz_seeds <out dir> <captures dir> <generated frames dir>

#include "tests/fuzz/seed_corpus.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s <out dir> <captures dir> <generated frames dir>\n",
                     argv[0]);
        return 2;
    }
    std::filesystem::path out(argv[1]);
    std::filesystem::create_directories(out);
    auto seeds = spool::tests::fuzz::build_seeds(argv[2], argv[3]);
    if (seeds.empty()) {
        std::fprintf(stderr, "no seeds found under %s and %s\n", argv[2], argv[3]);
        return 1;
    }
    for (const auto& s : seeds) {
        std::ofstream f(out / s.name, std::ios::binary);
        f.write(reinterpret_cast<const char*>(s.input.data()),
                static_cast<std::streamsize>(s.input.size()));
    }
    std::printf("%zu seeds in %s\n", seeds.size(), out.c_str());
    return 0;
}
