#!/usr/bin/env bash
# Builds spool-broker of the previous release once and prints the binary's path (the rolling
# upgrade test, tests/cluster/cluster_upgrade_test.cc, docs/upgrades.md).
#
#   scripts/upgrade/build-previous.sh [REV]
#
# REV: $SPOOL_PREVIOUS_RELEASE, else the tag v0.3.0, else commit cdd6304 (the commit v0.3.0
# names: the last one before metadata.version). The tree of that commit (`git archive`, so no
# worktree is registered) is built in <cache>/spool-previous/<commit>/src with the release
# preset, the spool-broker target only, through ccache with the same CCACHE_BASEDIR rules as a
# checkout: sources that did not change since are cache hits. <cache>: $SPOOL_CACHE, else
# ~/.cache/spool. A second run prints the cached binary at once. Exits non-zero, saying why,
# when the build fails (its log is <cache>/spool-previous/<commit>/build.log).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rev=${1:-${SPOOL_PREVIOUS_RELEASE:-}}
if [[ -z $rev ]]; then
    if git -C "$root" rev-parse -q --verify "refs/tags/v0.3.0" >/dev/null; then
        rev=v0.3.0
    else
        rev=cdd6304
    fi
fi
commit=$(git -C "$root" rev-parse --verify "$rev^{commit}") || {
    echo "build-previous.sh: no commit '$rev' in $root" >&2
    exit 1
}
out=${SPOOL_CACHE:-$HOME/.cache/spool}/spool-previous/$commit
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9  # one build at a time; a waiting caller then finds the binary
if [[ -x $out/spool-broker ]]; then
    echo "$out/spool-broker"
    exit 0
fi
src=$out/src
if [[ ! -f $src/CMakeLists.txt ]]; then
    rm -rf "$src"
    mkdir -p "$src"
    git -C "$root" archive "$commit" | tar -x -C "$src"
fi
cd "$src"
export CCACHE_BASEDIR=$src CCACHE_NOHASHDIR=1
start=$(date +%s)
if ! { cmake --preset release && nice cmake --build --preset release -j2 --target spool-broker; } \
        >"$out/build.log" 2>&1; then
    echo "build-previous.sh: building $rev ($commit) failed; the end of $out/build.log:" >&2
    tail -20 "$out/build.log" >&2
    exit 1
fi
cp build/release/broker/app/spool-broker "$out/spool-broker.tmp"
mv "$out/spool-broker.tmp" "$out/spool-broker"
echo "build-previous.sh: built $rev ($commit) in $(( $(date +%s) - start )) s" >&2
echo "$out/spool-broker"
