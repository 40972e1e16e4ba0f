// unsynced_fs: a FUSE passthrough file system that forgets, at a simulated power cut, every write
// that was not fsynced. The power-loss tests run spool-broker with its log.dirs on it.
//
//   unsynced_fs <backing dir> <mount point>      (foreground, single-threaded; root or fuse group)
//   mkdir <mount point>/.power-cut               the cut: every file goes back to its content at
//                                                its last fsync/fdatasync, and from then on every
//                                                read, write and sync answers EIO (the disk is
//                                                gone), so nothing acknowledged after the cut can
//                                                have been made durable by it
//   umount <mount point>                         the daemon exits; mount again to "power on"
//
// Why it is faithful for what the broker promises (an acknowledged record survives a power cut
// when the broker fsyncs before acknowledging): every change to file contents reaches this
// process, write() calls synchronously (no writeback cache) and writes through shared mmaps
// (the broker's index files) when the kernel writes the dirty pages back, which fsync forces
// first. Before a byte below the file's last synced size is overwritten or truncated away, its
// old 4 KiB block is saved; fsync/fdatasync of the file forgets the saved blocks (they are
// durable now). At the cut each file is truncated back to its synced size and its saved blocks
// are written back: exactly the state a disk that honours fsync and loses its cache would show.
// Files created and never synced come back empty.
//
// What it does not model: directory operations (create, rename, unlink, mkdir) are durable at
// once, so a missing directory fsync goes unnoticed; torn sectors inside one write; reordering of
// unsynced writes (they are all lost, the harshest allowed outcome; real disks keep some).
//
// Threading: fuse's single-threaded loop (-s); the state is still under a mutex for safety.

#define FUSE_USE_VERSION 31

#include <dirent.h>
#include <fcntl.h>
#include <fuse3/fuse.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr off_t block = 4096;
constexpr const char* cut_path = "/.power-cut";

std::string g_backing;

// What one file (backing inode) looked like at its last sync.
struct undo {
    int fd = -1;  // our own handle: the inode can be renamed or the caller's fd closed
    off_t synced_size = 0;
    std::map<off_t, std::vector<char>> blocks;  // block index -> content at the last sync
};

std::mutex g_mu;
std::map<ino_t, undo> g_undo;
bool g_cut = false;
uint64_t g_writes_since_sync = 0;

std::string real(const char* path) {
    return g_backing + path;
}

ino_t ino_of(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 ? st.st_ino : 0;
}

// Starts tracking the file behind fd (if not yet): its current size is what is on "disk".
undo& track(int fd, bool brand_new = false) {
    struct stat st {};
    ::fstat(fd, &st);
    auto [it, inserted] = g_undo.try_emplace(st.st_ino);
    if (inserted) {
        std::string self = "/proc/self/fd/" + std::to_string(fd);
        it->second.fd = ::open(self.c_str(), O_RDWR | O_CLOEXEC);
        it->second.synced_size = brand_new ? 0 : st.st_size;
    }
    return it->second;
}

// Saves the synced content of every block in [from, to) that is not saved yet.
void save_range(undo& u, off_t from, off_t to) {
    to = std::min(to, u.synced_size);
    for (off_t b = from / block; b * block < to; ++b) {
        if (u.blocks.contains(b)) {
            continue;
        }
        off_t len = std::min(block, u.synced_size - b * block);
        std::vector<char> bytes(static_cast<size_t>(len));
        ssize_t n = ::pread(u.fd, bytes.data(), bytes.size(), b * block);
        bytes.resize(n > 0 ? static_cast<size_t>(n) : 0);
        u.blocks.emplace(b, std::move(bytes));
    }
}

void forget(ino_t ino) {
    auto it = g_undo.find(ino);
    if (it != g_undo.end()) {
        ::close(it->second.fd);
        g_undo.erase(it);
    }
}

// Drops the state of the file at path if removing this name removes the file.
void forget_if_last_link(const std::string& p) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink <= 1) {
        forget(st.st_ino);
    }
}

void power_cut() {
    uint64_t files = 0;
    uint64_t blocks = 0;
    for (auto& [ino, u] : g_undo) {
        if (::ftruncate(u.fd, u.synced_size) != 0) {
            std::perror("unsynced_fs: ftruncate at cut");
        }
        for (auto& [b, bytes] : u.blocks) {
            if (::pwrite(u.fd, bytes.data(), bytes.size(), b * block) !=
                static_cast<ssize_t>(bytes.size())) {
                std::perror("unsynced_fs: pwrite at cut");
            }
            ++blocks;
        }
        ::fsync(u.fd);
        ::close(u.fd);
        ++files;
    }
    g_undo.clear();
    g_cut = true;
    std::fprintf(stderr,
                 "unsynced_fs: power cut: %llu files rolled back to their last sync (%llu blocks "
                 "restored, %llu writes since the last sync dropped)\n",
                 static_cast<unsigned long long>(files), static_cast<unsigned long long>(blocks),
                 static_cast<unsigned long long>(g_writes_since_sync));
    std::fflush(stderr);
}

int neg_errno() {
    return -errno;
}

int op_getattr(const char* path, struct stat* st, fuse_file_info* fi) {
    int rc =
        fi != nullptr ? ::fstat(static_cast<int>(fi->fh), st) : ::lstat(real(path).c_str(), st);
    return rc == 0 ? 0 : neg_errno();
}

int op_readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info*,
               fuse_readdir_flags) {
    DIR* d = ::opendir(real(path).c_str());
    if (d == nullptr) {
        return neg_errno();
    }
    while (dirent* e = ::readdir(d)) {
        fill(buf, e->d_name, nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
    }
    ::closedir(d);
    return 0;
}

int op_mkdir(const char* path, mode_t mode) {
    if (std::strcmp(path, cut_path) == 0) {
        std::lock_guard lk(g_mu);
        power_cut();
        return 0;
    }
    return ::mkdir(real(path).c_str(), mode) == 0 ? 0 : neg_errno();
}

int op_rmdir(const char* path) {
    return ::rmdir(real(path).c_str()) == 0 ? 0 : neg_errno();
}

int op_unlink(const char* path) {
    std::lock_guard lk(g_mu);
    forget_if_last_link(real(path));
    return ::unlink(real(path).c_str()) == 0 ? 0 : neg_errno();
}

int op_rename(const char* from, const char* to, unsigned int flags) {
    if (flags != 0) {
        return -EINVAL;
    }
    std::lock_guard lk(g_mu);
    forget_if_last_link(real(to));  // a replaced target is gone
    return ::rename(real(from).c_str(), real(to).c_str()) == 0 ? 0 : neg_errno();
}

int op_open(const char* path, fuse_file_info* fi) {
    int fd = ::open(real(path).c_str(), fi->flags & ~O_DIRECT);
    if (fd < 0) {
        return neg_errno();
    }
    fi->fh = static_cast<uint64_t>(fd);
    if ((fi->flags & O_TRUNC) != 0) {
        // Already truncated by open(); nothing to save any more: treat as a new file.
        std::lock_guard lk(g_mu);
        forget(ino_of(fd));
        track(fd, true);
    }
    return 0;
}

int op_create(const char* path, mode_t mode, fuse_file_info* fi) {
    int fd = ::open(real(path).c_str(), (fi->flags & ~O_DIRECT) | O_CREAT, mode);
    if (fd < 0) {
        return neg_errno();
    }
    fi->fh = static_cast<uint64_t>(fd);
    std::lock_guard lk(g_mu);
    struct stat st {};
    ::fstat(fd, &st);
    if (st.st_size == 0) {
        forget(st.st_ino);
        track(fd, true);  // never synced yet: comes back empty after a cut
    }
    return 0;
}

int op_read(const char*, char* buf, size_t size, off_t off, fuse_file_info* fi) {
    std::lock_guard lk(g_mu);
    if (g_cut) {
        return -EIO;
    }
    ssize_t n = ::pread(static_cast<int>(fi->fh), buf, size, off);
    return n >= 0 ? static_cast<int>(n) : neg_errno();
}

int op_write(const char*, const char* buf, size_t size, off_t off, fuse_file_info* fi) {
    std::lock_guard lk(g_mu);
    if (g_cut) {
        return -EIO;
    }
    int fd = static_cast<int>(fi->fh);
    auto& u = track(fd);
    save_range(u, off, off + static_cast<off_t>(size));
    ++g_writes_since_sync;
    ssize_t n = ::pwrite(fd, buf, size, off);
    return n >= 0 ? static_cast<int>(n) : neg_errno();
}

int op_truncate(const char* path, off_t size, fuse_file_info* fi) {
    std::lock_guard lk(g_mu);
    if (g_cut) {
        return -EIO;
    }
    int fd = fi != nullptr ? static_cast<int>(fi->fh) : ::open(real(path).c_str(), O_RDWR);
    if (fd < 0) {
        return neg_errno();
    }
    auto& u = track(fd);
    save_range(u, size, u.synced_size);
    ++g_writes_since_sync;
    int rc = ::ftruncate(fd, size) == 0 ? 0 : neg_errno();
    if (fi == nullptr) {
        ::close(fd);
    }
    return rc;
}

int op_fallocate(const char*, int mode, off_t off, off_t len, fuse_file_info* fi) {
    std::lock_guard lk(g_mu);
    if (g_cut) {
        return -EIO;
    }
    if (mode != 0) {
        return -EOPNOTSUPP;
    }
    int fd = static_cast<int>(fi->fh);
    track(fd);  // the grown size is lost at a cut unless synced
    ++g_writes_since_sync;
    int rc = ::posix_fallocate(fd, off, len);
    return -rc;
}

int op_fsync(const char*, int, fuse_file_info* fi) {
    std::lock_guard lk(g_mu);
    if (g_cut) {
        return -EIO;
    }
    // The kernel has sent this file's dirty pages (mmap included) before asking: all of it is
    // on "disk" now.
    forget(ino_of(static_cast<int>(fi->fh)));
    return 0;
}

int op_fsyncdir(const char*, int, fuse_file_info*) {
    std::lock_guard lk(g_mu);
    return g_cut ? -EIO : 0;
}

int op_release(const char*, fuse_file_info* fi) {
    ::close(static_cast<int>(fi->fh));
    return 0;
}

int op_flush(const char*, fuse_file_info*) {
    return 0;
}

int op_statfs(const char*, struct statvfs* st) {
    return ::statvfs(g_backing.c_str(), st) == 0 ? 0 : neg_errno();
}

int op_utimens(const char* path, const timespec tv[2], fuse_file_info*) {
    return ::utimensat(AT_FDCWD, real(path).c_str(), tv, AT_SYMLINK_NOFOLLOW) == 0 ? 0
                                                                                   : neg_errno();
}

int op_chmod(const char* path, mode_t mode, fuse_file_info*) {
    return ::chmod(real(path).c_str(), mode) == 0 ? 0 : neg_errno();
}

int op_access(const char* path, int mask) {
    return ::access(real(path).c_str(), mask) == 0 ? 0 : neg_errno();
}

int op_flock(const char*, fuse_file_info* fi, int op) {
    return ::flock(static_cast<int>(fi->fh), op) == 0 ? 0 : neg_errno();
}

void* op_init(fuse_conn_info*, fuse_config* cfg) {
    // No attribute or entry caching beyond a moment: sizes must follow the backing files.
    cfg->attr_timeout = 0;
    cfg->entry_timeout = 0;
    cfg->negative_timeout = 0;
    return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <backing dir> <mount point>\n", argv[0]);
        return 2;
    }
    char* resolved = ::realpath(argv[1], nullptr);
    if (resolved == nullptr) {
        std::perror("unsynced_fs: backing dir");
        return 2;
    }
    g_backing = resolved;
    std::free(resolved);

    fuse_operations ops{};
    ops.getattr = op_getattr;
    ops.readdir = op_readdir;
    ops.mkdir = op_mkdir;
    ops.rmdir = op_rmdir;
    ops.unlink = op_unlink;
    ops.rename = op_rename;
    ops.open = op_open;
    ops.create = op_create;
    ops.read = op_read;
    ops.write = op_write;
    ops.truncate = op_truncate;
    ops.fallocate = op_fallocate;
    ops.fsync = op_fsync;
    ops.fsyncdir = op_fsyncdir;
    ops.release = op_release;
    ops.flush = op_flush;
    ops.statfs = op_statfs;
    ops.utimens = op_utimens;
    ops.chmod = op_chmod;
    ops.access = op_access;
    ops.flock = op_flock;
    ops.init = op_init;

    std::vector<char*> args = {argv[0], argv[2], const_cast<char*>("-f"), const_cast<char*>("-s")};
    return fuse_main(static_cast<int>(args.size()), args.data(), &ops, nullptr);
}
