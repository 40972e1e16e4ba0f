#!/usr/bin/env bash
# Builds and starts one Spool broker on localhost:9092 with its data in ./data (or $SPOOL_DATA_DIR).
# Extra arguments go to spool-broker, e.g. --override num.partitions=3.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release --target spool-broker
data_dir=${SPOOL_DATA_DIR:-$PWD/data}
mkdir -p "$data_dir"
exec ./build/release/broker/app/spool-broker \
    --override listeners=PLAINTEXT://localhost:9092 \
    --override log.dirs="$data_dir" "$@"
