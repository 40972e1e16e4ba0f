#include "tests/integration/broker_flavour.h"

#include "common/testing/build_flavour.h"

#include <elf.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>
#include <vector>

#ifndef SPOOL_BROKER_BIN
#error "SPOOL_BROKER_BIN must name the spool-broker binary"
#endif

namespace spool::tests {

namespace {

// The string table of the ELF64 file's dynamic symbols (.dynstr), or "" when it has none or is
// not an ELF64 file. A sanitizer build imports (GCC) or exports (Clang) its runtime's entry
// points there, so this small table answers without reading a binary of hundreds of MB.
std::string dynamic_symbol_names(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    Elf64_Ehdr header{};
    if (!in.read(reinterpret_cast<char*>(&header), sizeof header) ||
        std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(Elf64_Shdr)) {
        return {};
    }
    std::vector<Elf64_Shdr> sections(header.e_shnum);
    in.seekg(static_cast<std::streamoff>(header.e_shoff));
    if (!in.read(reinterpret_cast<char*>(sections.data()),
                 static_cast<std::streamsize>(sections.size() * sizeof(Elf64_Shdr)))) {
        return {};
    }
    for (const auto& s : sections) {
        if (s.sh_type != SHT_DYNSYM || s.sh_link >= sections.size()) {
            continue;
        }
        const auto& strings = sections[s.sh_link];
        std::string names(strings.sh_size, '\0');
        in.seekg(static_cast<std::streamoff>(strings.sh_offset));
        if (in.read(names.data(), static_cast<std::streamsize>(names.size()))) {
            return names;
        }
    }
    return {};
}

bool has_name(std::string_view names, std::string_view name) {
    // Each name is NUL-terminated in the table: match whole names only.
    for (size_t at = names.find(name); at != std::string_view::npos;
         at = names.find(name, at + 1)) {
        bool starts = at == 0 || names[at - 1] == '\0';
        bool ends = at + name.size() < names.size() && names[at + name.size()] == '\0';
        if (starts && ends) {
            return true;
        }
    }
    return false;
}

}  // namespace

std::string broker_binary() {
    const char* bin = std::getenv("SPOOL_BROKER_BIN");
    return bin != nullptr && *bin != '\0' ? std::string(bin) : std::string(SPOOL_BROKER_BIN);
}

bool broker_instrumented() {
    static const bool instrumented = [] {
        if (spool::testing::instrumented_build && std::getenv("SPOOL_BROKER_BIN") == nullptr) {
            return true;
        }
        std::string names = dynamic_symbol_names(broker_binary());
        return has_name(names, "__asan_init") || has_name(names, "__tsan_init");
    }();
    return instrumented;
}

double broker_slowdown() {
    return broker_instrumented() ? spool::testing::instrumented_slowdown : 1.0;
}

}  // namespace spool::tests
