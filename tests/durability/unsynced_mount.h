#pragma once

// Runs the unsynced_fs FUSE daemon (see unsynced_fs.cc) for a test: mount() starts it on a
// backing directory and waits for the mount, power_cut() rolls every file back to its last
// fsync and makes the disk fail from then on, unmount() ends the daemon. Mount again to "power
// on" with what survived.
//
// Lifecycle: mount()/unmount() pairs; the destructor unmounts. Threading: test thread only.

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace spool::tests {

class unsynced_mount {
public:
    unsynced_mount(std::filesystem::path backing, std::filesystem::path mount_point,
                   std::filesystem::path log_file);
    ~unsynced_mount();
    unsynced_mount(const unsynced_mount&) = delete;
    unsynced_mount& operator=(const unsynced_mount&) = delete;

    // False (with the reason in log_text()) when FUSE cannot mount here.
    bool mount();
    void power_cut();
    void unmount();
    [[nodiscard]] const std::filesystem::path& path() const { return _mount_point; }
    [[nodiscard]] std::string log_text() const;
    // The last "power cut: ..." line of a daemon log (what that cut rolled back).
    static std::string last_cut(const std::string& log);

private:
    bool mounted() const;

    std::filesystem::path _backing;
    std::filesystem::path _mount_point;
    std::filesystem::path _log;
    pid_t _pid = -1;
};

}  // namespace spool::tests
