#!/usr/bin/env bash
# Installs KafkaJS (and the pure-JS snappy codec) from npm into $SPOOL_CACHE/kafkajs-<version>,
# exactly as pinned by tests/compat/kafkajs/package-lock.json. Run the checker with
# NODE_PATH=<dir>/node_modules. Prints the peer directory. Idempotent; a warm run starts no npm.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
peer_lock kafkajs

src=$SPOOL_REPO_ROOT/tests/compat/kafkajs
dir=$SPOOL_CACHE/kafkajs-$SPOOL_KAFKAJS_VERSION
hash=$(peer_hash "$SPOOL_KAFKAJS_VERSION" "$src/package.json" "$src/package-lock.json")
if ! peer_is_current "$dir" "$hash"; then
    grep -q "\"kafkajs\": \"$SPOOL_KAFKAJS_VERSION\"" "$src/package.json" ||
        { peer_log "tests/compat/kafkajs/package.json does not pin kafkajs $SPOOL_KAFKAJS_VERSION"; exit 1; }
    command -v npm >/dev/null || { peer_log "npm is missing (apt-get install npm)"; exit 1; }
    peer_log "installing kafkajs $SPOOL_KAFKAJS_VERSION into $dir"
    mkdir -p "$dir"
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
    peer_mark_current "$dir" "$hash"
fi
echo "$dir"
