#include "common/file_slice.h"

#include <unistd.h>

namespace spool {

file_handle::~file_handle() {
    if (_fd >= 0) {
        ::close(_fd);
    }
}

}  // namespace spool
