#include "broker/storage/observer.h"

namespace spool::broker::storage {

storage_observer& storage_observer::none() {
    static storage_observer quiet;
    return quiet;
}

}  // namespace spool::broker::storage
