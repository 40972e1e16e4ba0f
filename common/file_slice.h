#pragma once

// A byte range of an open file, sent to a socket with sendfile instead of being copied through
// user space. The storage engine hands these out for reads; the protocol encoder splices them
// into a response; the network layer sends them. The shared_ptr keeps the file open while a
// slice is in flight even if the segment is deleted or closed meanwhile.

#include <cstdint>
#include <memory>

namespace spool {

// Owns a file descriptor and closes it when the last slice and the segment let go of it.
class file_handle {
public:
    explicit file_handle(int fd) : _fd(fd) {}
    ~file_handle();
    file_handle(const file_handle&) = delete;
    file_handle& operator=(const file_handle&) = delete;

    int fd() const { return _fd; }

private:
    int _fd;
};

struct file_slice {
    std::shared_ptr<const file_handle> file;
    uint64_t offset = 0;
    uint32_t length = 0;
};

}  // namespace spool
