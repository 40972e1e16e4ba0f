#include "broker/app/termination_message.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace spool::broker::app {

std::string termination_message_path() {
    const char* set = std::getenv(termination_message_path_env);
    return set != nullptr ? std::string(set) : std::string(default_termination_message_path);
}

std::string termination_message_line(std::string_view text) {
    std::string line(text.substr(0, termination_message_limit));
    for (auto& ch : line) {
        if (ch == '\n' || ch == '\r') {
            ch = ' ';
        }
    }
    while (!line.empty() && line.back() == ' ') {
        line.pop_back();
    }
    return line;
}

bool write_termination_message(const std::string& path, std::string_view text) {
    if (path.empty()) {
        return false;
    }
    // No O_CREAT: the file is the kubelet's to make (see the header).
    int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    const std::string line = termination_message_line(text);
    size_t done = 0;
    while (done < line.size()) {
        ssize_t n = ::write(fd, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        done += static_cast<size_t>(n);
    }
    ::close(fd);
    return done == line.size();
}

}  // namespace spool::broker::app
