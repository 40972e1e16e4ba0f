// Compiled (not linked) by the broker_config_typed_key_* CTest tests: with SPOOL_PROBE_KEY a
// table key it compiles; with a misspelt one the compiler must refuse it, which is the point of
// typed keys (a misspelt get_int("name") was a run-time assert).

#include "broker/config/broker_config.h"

#include <chrono>

std::chrono::milliseconds probe(const spool::broker::config::broker_config& cfg) {
    return cfg.get(spool::broker::config::keys::SPOOL_PROBE_KEY);
}
