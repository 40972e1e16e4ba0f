# Helpers shared by the peer fetch scripts. Source it; it defines SPOOL_CACHE and stamp helpers.
#
# Every peer lives in ${SPOOL_CACHE:-$HOME/.cache/spool}/<peer>-<version>/. A fetch is complete
# when that directory holds a `.stamp` file whose content equals the hash of everything the fetch
# depended on (version, pom/package.json/go.mod, sources); a warm run compares one hash and returns
# without starting mvn, npm or go, which is what keeps a warm fetch within a second or two.

SPOOL_REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=versions.sh
source "$SPOOL_REPO_ROOT/scripts/peers/versions.sh"
SPOOL_CACHE=${SPOOL_CACHE:-$HOME/.cache/spool}
export SPOOL_CACHE

peer_log() { echo "peers: $*" >&2; }

# peer_hash FILE_OR_STRING...: a short hash of the given files' contents and literal strings.
peer_hash() {
    local arg
    for arg in "$@"; do
        if [[ -f "$arg" ]]; then cat "$arg"; else printf '%s\n' "$arg"; fi
    done | sha256sum | cut -c1-16
}

# peer_is_current DIR HASH: true when DIR was completed by a fetch with the same inputs.
peer_is_current() { [[ -f "$1/.stamp" && "$(cat "$1/.stamp")" == "$2" ]]; }

# peer_mark_current DIR HASH: records a completed fetch (written last, so a killed fetch re-runs).
peer_mark_current() { printf '%s\n' "$2" >"$1/.stamp.tmp" && mv "$1/.stamp.tmp" "$1/.stamp"; }

# peer_lock NAME: serialises fetches of one peer (parallel CTest entries may fetch at once). Held
# until the calling script exits.
peer_lock() {
    mkdir -p "$SPOOL_CACHE"
    exec 9>"$SPOOL_CACHE/.$1.lock"
    flock 9
}
