#!/usr/bin/env bash
# Runs the kmsg cross-check: builds the Go tool once per kmsg version and main.go content, caches
# it outside the repository (~/.cache/spool/kmsg-crosscheck-<kmsg version>/), then runs the C++
# test binary, which drives the tool. Exits 77 (CTest: skipped) when Go is not installed.
#
# Usage: tools/kmsg-crosscheck/run.sh <protocol_crosscheck_tests binary> [gtest args...]
set -euo pipefail

test_binary=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
PATH=$PATH:/usr/local/go/bin
if ! command -v go >/dev/null 2>&1; then
    echo "go is not installed: skipping the kmsg cross-check"
    exit 77
fi

version=$(grep -o 'pkg/kmsg v[0-9][0-9.]*' "$here/go.mod" | cut -d' ' -f2)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/spool/kmsg-crosscheck-$version
source_hash=$(cat "$here/main.go" "$here/go.mod" "$here/go.sum" | sha256sum | cut -c1-12)
tool=$cache/kmsg-crosscheck-$source_hash
if [ ! -x "$tool" ]; then
    mkdir -p "$cache"
    # Build from a copy so the repository's go.mod/go.sum are never rewritten.
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    cp "$here/main.go" "$here/go.mod" "$here/go.sum" "$work/"
    (cd "$work" && GOFLAGS=-mod=mod go build -o "$tool.tmp" .)
    mv "$tool.tmp" "$tool"
fi
SPOOL_KMSG_TOOL=$tool exec "$test_binary" "$@"
