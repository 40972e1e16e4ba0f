#!/usr/bin/env bash
# Builds the franz-go compatibility checkers (tests/compat/franz, modules from the Go module proxy
# into the default GOMODCACHE) into $SPOOL_CACHE/franz-go-<version>/: franz-compat, and
# franz-security (tests/compat/franz/security, run by tests/compat/security).
# Prints the peer directory. Idempotent; a warm run starts no go command.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
peer_lock franz

src=$SPOOL_REPO_ROOT/tests/compat/franz
dir=$SPOOL_CACHE/franz-go-$SPOOL_FRANZ_VERSION
hash=$(peer_hash "$SPOOL_FRANZ_VERSION" "$src/go.mod" "$src/go.sum" "$src"/*.go "$src"/security/*.go)
if ! peer_is_current "$dir" "$hash"; then
    grep -q "github.com/twmb/franz-go $SPOOL_FRANZ_VERSION" "$src/go.mod" ||
        { peer_log "tests/compat/franz/go.mod does not pin franz-go $SPOOL_FRANZ_VERSION"; exit 1; }
    command -v go >/dev/null || { peer_log "go is missing"; exit 1; }
    peer_log "building the franz-go $SPOOL_FRANZ_VERSION checker into $dir"
    mkdir -p "$dir"
    for bin in franz-compat:. franz-security:./security; do
        (cd "$src" && go build -mod=readonly -trimpath -buildvcs=false -o "$dir/${bin%%:*}.tmp" "${bin#*:}") >&2
        mv "$dir/${bin%%:*}.tmp" "$dir/${bin%%:*}"
    done
    peer_mark_current "$dir" "$hash"
fi
echo "$dir"
