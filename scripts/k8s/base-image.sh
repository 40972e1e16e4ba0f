#!/usr/bin/env bash
# Makes the Debian 12 base image the Dockerfile builds FROM, without a registry: mmdebstrap lays a
# minbase bookworm root from Debian's mirror into a tarball, podman imports it and tags it as
# debian:12 and debian:12-slim (the names the Dockerfile uses), so `podman build --pull=never`
# never asks a registry. The tarball is cached in ~/.cache/spool/base-image-<hash>/, keyed by
# everything it is made from (suite, variant, mirrors, options); a warm run only re-imports it when
# podman lacks the tags.
set -euo pipefail
SUITE=bookworm
VARIANT=minbase
MIRRORS=("deb http://deb.debian.org/debian bookworm main"
         "deb http://deb.debian.org/debian bookworm-updates main"
         "deb http://deb.debian.org/debian-security bookworm-security main")
# Packages' docs, man pages and translations are of no use in a container and a third of its size.
OPTIONS=(--variant="$VARIANT" --format=tar --dpkgopt='path-exclude=/usr/share/man/*'
         --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/locale/*')
key=$(printf '%s\n' "$SUITE" "${OPTIONS[@]}" "${MIRRORS[@]}" | sha256sum | cut -c1-12)
CACHE="${SPOOL_CACHE:-$HOME/.cache/spool}/base-image-$key"
TAR="$CACHE/debian-12-$VARIANT.tar"
mkdir -p "$CACHE"
exec 7>"$CACHE/.lock"
flock 7

for tool in mmdebstrap podman; do
    command -v "$tool" >/dev/null || { echo "base-image: $tool missing: run scripts/setup.sh --with-tests" >&2; exit 1; }
done
if [ ! -f "$TAR" ]; then
    t0=$(date +%s)
    # A mirror's hiccup fails the whole bootstrap (seen on fresh machines: "apt download failed"
    # twice within 7 s, then a bootstrap by hand a minute later made it): up to 4 attempts, the
    # later ones after a pause that gives the mirror time.
    # --quiet would hide apt's own reason ("Err:" lines): its output goes to a log whose errors
    # are printed when an attempt fails (a CI run failed 4 attempts in 2.5 min while the same
    # bootstrap by hand made the image in 28 s; the reason was not kept).
    # mmdebstrap hands apt a pipe as `cat >&N` for /bin/sh (dash), which takes only one-digit fd
    # numbers ("Bad fd number", exit 2). Started with fds 3-9 taken (ctest's, this script's
    # lock), the pipe got fd 11 and every attempt failed with "Sub-process cat >&11 returned an
    # error code (2)" / "apt download failed" (the fresh-machine CI failures of sessions 11, 13
    # and 14; by hand, with few fds open, it worked). So it starts with only 0-2 open.
    with_only_std_fds() {
        (
            for fd in /proc/self/fd/*; do
                n=${fd##*/}
                if ((n > 2)); then eval "exec $n>&-"; fi
            done
            exec "$@"
        )
    }
    log="$CACHE/mmdebstrap.log"
    for attempt in 1 2 3 4; do
        with_only_std_fds nice -n 19 mmdebstrap "${OPTIONS[@]}" "$SUITE" "$TAR.tmp" "${MIRRORS[@]}" >"$log" 2>&1 && break
        grep -E '^(Err|E|W):|Temporary failure|Could not|timed out' "$log" | tail -15 >&2 || true
        rm -f "$TAR.tmp"
        ((attempt < 4)) || { echo "base-image: mmdebstrap failed 4 times" >&2; exit 1; }
        echo "base-image: mmdebstrap failed (attempt $attempt of 4); again in $((attempt * 20)) s" >&2
        sleep $((attempt * 20))
    done
    mv "$TAR.tmp" "$TAR"
    echo "base-image: $TAR made in $(($(date +%s) - t0)) s"
fi
image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null; }
if [ "$(cat "$CACHE/image-id" 2>/dev/null)" != "$(image_id docker.io/library/debian:12)" ] ||
    [ -z "$(image_id docker.io/library/debian:12)" ] || [ -z "$(image_id docker.io/library/debian:12-slim)" ]; then
    id=$(podman import -q --change 'CMD ["/bin/bash"]' "$TAR" docker.io/library/debian:12 | tail -1)
    podman tag "$id" docker.io/library/debian:12-slim
    image_id docker.io/library/debian:12 >"$CACHE/image-id"
fi
echo "base-image: debian:12 and debian:12-slim = $(cat "$CACHE/image-id") (from $TAR)"
