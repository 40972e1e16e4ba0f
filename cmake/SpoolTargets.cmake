# Shared compile settings and helpers for Spool targets.
add_library(spool_compile_options INTERFACE)
target_compile_options(spool_compile_options INTERFACE -Wall -Wextra -Wno-unused-parameter)
target_compile_definitions(spool_compile_options INTERFACE BOOST_ASIO_NO_DEPRECATED
                                                           BOOST_ASIO_HAS_CO_AWAIT)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC 12 warns about coroutine frames and std::variant in ways that are false positives.
    target_compile_options(spool_compile_options INTERFACE -Wno-maybe-uninitialized
                                                           -Wno-mismatched-new-delete)
endif()
if(SPOOL_SANITIZE)
    string(REPLACE ";" "," _spool_sanitizers "${SPOOL_SANITIZE}")
    target_compile_options(spool_compile_options INTERFACE -fsanitize=${_spool_sanitizers}
                                                           -fno-omit-frame-pointer)
    target_link_options(spool_compile_options INTERFACE -fsanitize=${_spool_sanitizers})
    if("undefined" IN_LIST SPOOL_SANITIZE)
        # Without vptr: its check reads the vtable's memory through a pipe(2) probe, so in a
        # process that has run out of descriptors on purpose (the faults and lazy_index tests of
        # RLIMIT_NOFILE exhaustion) every virtual call through a shared_ptr reports "invalid vptr"
        # and no suppression can name the type it cannot read. ASan still catches a use of a
        # freed or wrong object; the other UBSan checks stay on.
        target_compile_options(spool_compile_options INTERFACE -fno-sanitize-recover=undefined
                                                               -fno-sanitize=vptr)
        if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
            # Clang 14's function-type check cannot emit coroutine frames ("Cannot represent a
            # difference across sections"); the other UBSan checks stay on.
            target_compile_options(spool_compile_options INTERFACE -fno-sanitize=function)
        endif()
    endif()
endif()

if(SPOOL_FUZZ)
    # Every library of the fuzz build carries libFuzzer's coverage instrumentation: the broker
    # fuzzer (tests/fuzz) steers by the branches of the handlers, coordinator and storage, not
    # only its own. Binaries without libFuzzer still link (the sanitizer runtime has the hooks).
    target_compile_options(spool_compile_options INTERFACE -fsanitize=fuzzer-no-link)
endif()

# spool_add_library(NAME SOURCES ... DEPS ...): a static library with the project's settings.
function(spool_add_library name)
    cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
    add_library(${name} STATIC ${ARG_SOURCES})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC spool_compile_options ${ARG_DEPS})
endfunction()

# spool_add_test(NAME SOURCES ... DEPS ... [LABELS ...] [SERIAL] [TIMEOUT seconds]): a GoogleTest
# executable registered with CTest, one CTest entry per test case (TIMEOUT: per test case).
include(GoogleTest)
function(spool_add_test name)
    # SERIAL: the tests measure latency against a baseline taken in the same test, so they run
    # alone rather than beside other tests competing for the same cores.
    cmake_parse_arguments(ARG "SERIAL" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
    add_executable(${name} ${ARG_SOURCES})
    target_link_libraries(${name} PRIVATE spool_compile_options ${ARG_DEPS} GTest::gtest
                                          GTest::gmock GTest::gtest_main)
    if(NOT ARG_LABELS)
        set(ARG_LABELS unit)
    endif()
    set(_properties LABELS "${ARG_LABELS}")
    if(ARG_SERIAL)
        list(APPEND _properties RUN_SERIAL TRUE)
    endif()
    if(ARG_TIMEOUT)
        list(APPEND _properties TIMEOUT ${ARG_TIMEOUT})
    endif()
    gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST PROPERTIES ${_properties}
                         DISCOVERY_TIMEOUT 60)
endfunction()
