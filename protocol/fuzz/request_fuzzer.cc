// libFuzzer target: the broker's request path (header parse, body decode by api key/version),
// plus re-encode invariants. Built with SPOOL_FUZZ=ON and clang (CMake preset `fuzz`).

#include "protocol/fuzz/request_dispatch.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    (void)spool::protocol::fuzz::decode_request_frame({data, size});
    return 0;
}
