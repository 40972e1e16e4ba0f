#include "tests/durability/unsynced_mount.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#ifndef SPOOL_UNSYNCED_FS_BIN
#error "SPOOL_UNSYNCED_FS_BIN must name the unsynced_fs binary"
#endif

namespace spool::tests {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

unsynced_mount::unsynced_mount(fs::path backing, fs::path mount_point, fs::path log_file)
    : _backing(std::move(backing)),
      _mount_point(std::move(mount_point)),
      _log(std::move(log_file)) {
    fs::create_directories(_backing);
    fs::create_directories(_mount_point);
}

unsynced_mount::~unsynced_mount() {
    unmount();
}

bool unsynced_mount::mounted() const {
    std::ifstream in("/proc/self/mounts");
    std::string line;
    std::string needle = " " + _mount_point.string() + " fuse";
    while (std::getline(in, line)) {
        if (line.find(needle) != std::string::npos) {
            return true;
        }
    }
    return false;
}

bool unsynced_mount::mount() {
    _pid = ::fork();
    if (_pid == 0) {
        int fd = ::open(_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::execl(SPOOL_UNSYNCED_FS_BIN, SPOOL_UNSYNCED_FS_BIN, _backing.c_str(),
                _mount_point.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
        if (mounted()) {
            return true;
        }
        int status = 0;
        if (::waitpid(_pid, &status, WNOHANG) == _pid) {
            _pid = -1;
            return false;
        }
        std::this_thread::sleep_for(20ms);
    }
    return false;
}

void unsynced_mount::power_cut() {
    // The daemon takes this mkdir as the cut and creates nothing (mkdir then reports ENOENT).
    (void)::mkdir((_mount_point / ".power-cut").c_str(), 0755);
}

void unsynced_mount::unmount() {
    if (_pid <= 0) {
        return;
    }
    for (int i = 0; i < 100 && mounted(); ++i) {
        if (::umount2(_mount_point.c_str(), 0) == 0) {
            break;
        }
        std::this_thread::sleep_for(50ms);
    }
    if (mounted()) {
        (void)::umount2(_mount_point.c_str(), MNT_DETACH);
    }
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
        if (::waitpid(_pid, &status, WNOHANG) == _pid) {
            _pid = -1;
            return;
        }
        std::this_thread::sleep_for(20ms);
    }
    ::kill(_pid, SIGKILL);
    ::waitpid(_pid, &status, 0);
    _pid = -1;
}

std::string unsynced_mount::log_text() const {
    std::ifstream in(_log);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string unsynced_mount::last_cut(const std::string& log) {
    auto at = log.rfind("power cut:");
    if (at == std::string::npos) {
        return "(no power cut reported)";
    }
    auto end = log.find('\n', at);
    return log.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace spool::tests
