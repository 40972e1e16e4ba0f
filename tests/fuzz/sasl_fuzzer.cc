// libFuzzer target: the SASL exchange (sasl_fuzz.h): the SCRAM server's parsers and exchange
// alone, and sequences of SASL requests on one connection of an in-process broker. Built with
// SPOOL_FUZZ=ON and clang (preset `fuzz`).

#include "common/log.h"
#include "tests/fuzz/sasl_fuzz.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace {
std::unique_ptr<spool::tests::fuzz::sasl_under_fuzz> sasl;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // Failed authentications are logged by design; at fuzzing rates that would be all it does.
    spool::log::set_level("off");
    sasl = std::make_unique<spool::tests::fuzz::sasl_under_fuzz>();
    if (!sasl->error().empty()) {
        std::fprintf(stderr, "sasl fuzz: the broker did not start: %s\n", sasl->error().c_str());
        std::abort();
    }
    std::atexit([] {
        std::fprintf(stderr, "sasl fuzz: %llu SCRAM exchanges completed\n",
                     (unsigned long long)sasl->exchanges_completed());
        if (sasl->stop() != 0) {
            std::fprintf(stderr, "sasl fuzz: requests left unanswered\n");
            std::abort();
        }
        sasl.reset();
    });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    (void)sasl->run({data, size});
    return 0;
}
