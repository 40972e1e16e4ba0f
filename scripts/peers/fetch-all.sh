#!/usr/bin/env bash
# Fetches every real-client peer the compatibility suite and the benchmarks need, into
# ${SPOOL_CACHE:-$HOME/.cache/spool}/<peer>-<version>/ (outside the repository). Idempotent: a warm
# run only compares input hashes and takes well under a second. Called by scripts/test.sh.
#   kafka-<v>     Apache Kafka jars (Java client, CLI tools, broker) + the compiled Java checker
#   kafkajs-<v>   KafkaJS from npm
#   franz-go-<v>  the franz-go checker binaries (modules via the Go module proxy)
#   confluent-kafka-<v>  a venv with confluent-kafka Python from PyPI
# kcat and librdkafka come from Debian (scripts/setup.sh --with-tests).
#
# A peer that cannot be fetched (after one retry) is reported and skipped with exit status 0, so
# that scripts/test.sh still builds and runs every other test; the compat tests that need it fetch
# again and fail on their own. SPOOL_PEERS_STRICT=1 makes any failure fatal instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"

start=$SECONDS
failed=()
for peer in kafka kafkajs franz python helm; do
    if ! bash "$here/fetch-$peer.sh" >/dev/null; then
        peer_log "fetching $peer failed; retrying once"
        bash "$here/fetch-$peer.sh" >/dev/null || failed+=("$peer")
    fi
done
# The newest Kafka as well (jars only): tests read Spool's files with its tools
# (DumpLogSegments on .txnindex and __transaction_state) and kafka_reference runs it. Fetched
# here, before any test, so that no test reads its libs/ while another fetches them.
if ! SPOOL_KAFKA_VERSION=4.4.0 bash "$here/fetch-kafka.sh" --jars-only >/dev/null; then
    failed+=("kafka 4.4.0")
fi
for tool in kcat; do
    command -v "$tool" >/dev/null || peer_log "warning: $tool is not installed (scripts/setup.sh --with-tests)"
done
if ((${#failed[@]})); then
    peer_log "could not fetch: ${failed[*]} ($((SECONDS - start))s); their compat tests will fail"
    [[ "${SPOOL_PEERS_STRICT:-0}" == 1 ]] && exit 1
    exit 0
fi
peer_log "all peers ready in $SPOOL_CACHE ($((SECONDS - start))s)"
