#include "common/log.h"
#include "common/version.h"

#include <cstring>
#include <iostream>

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--version") == 0) {
            std::cout << "spool-broker " << spool::version_string << "\n";
            return 0;
        }
    }
    spool::log::get("app")->error("spool-broker is not serving yet: the Kafka listener is still being built");
    return 1;
}
