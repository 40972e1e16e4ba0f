// libFuzzer target: request frames from a fuzzed client connection, run against a whole
// in-process broker (real shards, metadata store, logs in a temporary directory, group
// coordinator, Kafka dispatcher and handlers). See fuzz_session.h for the input format and
// in_process_broker.h for what is checked. Built with SPOOL_FUZZ=ON and clang (preset `fuzz`).

#include "common/log.h"
#include "tests/fuzz/fuzz_session.h"
#include "tests/fuzz/heap_watch.h"

#include <cstdint>
#include <cstdio>
#include <memory>

namespace {

std::unique_ptr<spool::tests::fuzz::broker_under_fuzz> broker;
spool::tests::fuzz::heap_watch::watch heap;

void print_totals() {
    if (!broker) {
        return;
    }
    const auto& t = broker->totals();
    std::fprintf(stderr,
                 "broker fuzz: %llu requests, %llu answered, %llu closed the connection, "
                 "%llu parked, %llu restarts\n",
                 (unsigned long long)t.requests, (unsigned long long)t.responses,
                 (unsigned long long)t.closed, (unsigned long long)t.parked,
                 (unsigned long long)broker->restarts());
    heap.print();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // Bad input is logged by design; at fuzzing rates that would be all the fuzzer does.
    spool::log::set_level("off");
    heap.install();  // before the shard threads start
    broker = std::make_unique<spool::tests::fuzz::broker_under_fuzz>();
    std::atexit([] {
        broker->stop();  // checks that every request in flight gets an answer
        print_totals();
        broker.reset();
    });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    heap.begin();
    (void)broker->run({data, size});
    heap.end(size);
    (void)broker->bound_state();
    return 0;
}
