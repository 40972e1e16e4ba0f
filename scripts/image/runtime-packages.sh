#!/bin/sh
# Image build step: strips the binaries in /out/bin and writes, for each, the Debian packages its
# runtime stage installs to /out/<binary>.packages - the owner package of every library ldd
# resolves - so the image follows the code's dependencies without a second hand-kept list.
set -eu
for path in /out/bin/*; do
    b=$(basename "$path")
    strip "$path"
    ldd "$path" | awk '$3 ~ /^\// {print $3}' >/tmp/libs
    while read -r lib; do
        dpkg -S "$lib" 2>/dev/null || dpkg -S "$(realpath "$lib")" 2>/dev/null \
            || dpkg -S "/usr$lib" 2>/dev/null || { echo "no package owns $lib" >&2; exit 1; }
    done </tmp/libs >/tmp/owners
    cut -d: -f1 /tmp/owners | sort -u >"/out/$b.packages"
done
rm -f /tmp/libs /tmp/owners
