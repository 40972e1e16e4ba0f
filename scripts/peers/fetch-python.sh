#!/usr/bin/env bash
# Installs confluent-kafka Python (PyPI, pinned in tests/compat/security/requirements.txt; its
# wheel bundles librdkafka) into a venv at $SPOOL_CACHE/confluent-kafka-<version>/venv.
# Prints the peer directory (run <dir>/venv/bin/python). Idempotent; a warm run starts no pip.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
peer_lock confluent-kafka

req=$SPOOL_REPO_ROOT/tests/compat/security/requirements.txt
dir=$SPOOL_CACHE/confluent-kafka-$SPOOL_CONFLUENT_KAFKA_VERSION
hash=$(peer_hash "$SPOOL_CONFLUENT_KAFKA_VERSION" "$req" "$(python3 --version 2>&1)")
if ! peer_is_current "$dir" "$hash"; then
    grep -qx "confluent-kafka==$SPOOL_CONFLUENT_KAFKA_VERSION" "$req" ||
        { peer_log "$req does not pin confluent-kafka $SPOOL_CONFLUENT_KAFKA_VERSION"; exit 1; }
    python3 -m venv --help >/dev/null 2>&1 || { peer_log "python3 venv is missing (apt-get install python3-venv)"; exit 1; }
    peer_log "installing confluent-kafka $SPOOL_CONFLUENT_KAFKA_VERSION into $dir/venv"
    rm -rf "$dir/venv"
    mkdir -p "$dir"
    python3 -m venv "$dir/venv" >&2
    "$dir/venv/bin/pip" install --quiet --disable-pip-version-check -r "$req" >&2
    "$dir/venv/bin/python" -c 'import confluent_kafka' >&2
    peer_mark_current "$dir" "$hash"
fi
echo "$dir"
