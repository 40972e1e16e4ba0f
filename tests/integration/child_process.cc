#include "tests/integration/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>

namespace spool::tests {

namespace fs = std::filesystem;

fs::path make_temp_dir(std::string_view prefix) {
    std::random_device rd;
    fs::path dir =
        fs::temp_directory_path() /
        (std::string(prefix) + "-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir);
    return dir;
}

pid_t spawn_logged(std::vector<std::string> args, const fs::path& log,
                   void (*in_child)(const void*), const void* arg) {
    std::string log_path = log.string();
    std::vector<char*> argv;
    for (auto& a : args) {
        argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid == 0) {
        // The child dies with the test process even when a crash, a SIGKILL or a CTest timeout
        // skips the destructor that would kill it: a leaked broker or etcd keeps its ports, its
        // data directory and a core busy after the run. A parent that died between fork() and
        // prctl() sent nothing: getppid() no longer names it then.
        if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) {
            ::_exit(127);
        }
        if (in_child != nullptr) {
            in_child(arg);
        }
        int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    return pid;
}

bool reap_if_exited(pid_t& pid, int* status) {
    if (pid <= 0) {
        return true;
    }
    int st = 0;
    if (::waitpid(pid, &st, WNOHANG) != pid) {
        return false;
    }
    if (status != nullptr) {
        *status = st;
    }
    pid = -1;
    return true;
}

void kill_and_reap(pid_t& pid) {
    if (pid > 0) {
        ::kill(pid, SIGKILL);
        int status = 0;
        ::waitpid(pid, &status, 0);
        pid = -1;
    }
}

std::string read_text_file(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace spool::tests
