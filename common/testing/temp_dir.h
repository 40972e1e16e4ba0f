#pragma once

// A fresh directory for one test under <tmp>/<area>/, removed with everything in it at
// destruction. Header-only so any module's tests can use it without a link dependency.

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace spool::testing {

class temp_dir {
public:
    explicit temp_dir(const std::string& area = "spool-tests") {
        auto base = std::filesystem::temp_directory_path() / area;
        std::filesystem::create_directories(base);
        std::string tmpl = (base / "XXXXXX").string();
        _path = ::mkdtemp(tmpl.data());
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(_path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;

    const std::filesystem::path& path() const { return _path; }

private:
    std::filesystem::path _path;
};

}  // namespace spool::testing
