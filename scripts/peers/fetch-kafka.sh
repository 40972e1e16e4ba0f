#!/usr/bin/env bash
# Fetches Apache Kafka ${SPOOL_KAFKA_VERSION} from Maven Central: the Java client, the command-line
# tools and the broker, as one flat classpath in $SPOOL_CACHE/kafka-<version>/libs, then compiles
# the Java compatibility checker (tests/compat/java/src) against it into .../compat-classes.
# Maven's own repository is kept in $SPOOL_CACHE/m2 so the cache is self-contained.
# Prints the peer directory on stdout. Idempotent; a warm run starts neither mvn nor javac.
#   --jars-only   the jars alone, no checker: what the broker fixtures need (tests/fixtures), and
#                 what works for a second reference version whose client API the checker does not
#                 compile against (SPOOL_KAFKA_VERSION=4.4.0 ..., tests/kafka_reference).
#   --mirror-maker  also MirrorMaker 2 (tests/compat/mm2/pom.xml: connect-mirror and whatever of its
#                 runtime classpath libs lacks) into .../mirror-maker, beside libs: run it with
#                 -cp "$dir/libs/*:$dir/mirror-maker/*". A directory of its own, so that a version
#                 whose connect-mirror Maven Central lacks still gets libs (4.4.0 has none there).
set -euo pipefail
jars_only=0 mirror_maker=0
for arg in "$@"; do
    case $arg in
        --jars-only) jars_only=1 ;;
        --mirror-maker) mirror_maker=1 ;;
        *) echo "fetch-kafka.sh: unknown argument $arg" >&2; exit 2 ;;
    esac
done
source "$(dirname "$0")/lib.sh"
peer_lock kafka

# copy_jars POM OUT: the runtime classpath of POM for this Kafka version into OUT.tmp (the caller
# renames it to OUT once complete, so a reader never sees half a directory).
copy_jars() {
    command -v mvn >/dev/null || { peer_log "mvn is missing (apt-get install maven)"; exit 1; }
    rm -rf "$2.tmp"
    mvn -B -q -f "$1" -Dmaven.repo.local="$SPOOL_CACHE/m2" -Dkafka.version="$SPOOL_KAFKA_VERSION" \
        dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$2.tmp" >&2
}

dir=$SPOOL_CACHE/kafka-$SPOOL_KAFKA_VERSION
pom=$SPOOL_REPO_ROOT/tests/compat/java/pom.xml
jars_hash=$(peer_hash "$SPOOL_KAFKA_VERSION" "$pom")
if ! peer_is_current "$dir" "$jars_hash"; then
    peer_log "fetching Apache Kafka $SPOOL_KAFKA_VERSION jars into $dir/libs"
    mkdir -p "$dir"
    copy_jars "$pom" "$dir/libs"
    rm -rf "$dir/libs" && mv "$dir/libs.tmp" "$dir/libs"
    rm -f "$dir/compat-classes/.stamp"
    peer_mark_current "$dir" "$jars_hash"
fi

if ((mirror_maker)); then
    mm2=$dir/mirror-maker
    mm2_pom=$SPOOL_REPO_ROOT/tests/compat/mm2/pom.xml
    mm2_hash=$(peer_hash "$jars_hash" "$mm2_pom")
    if ! peer_is_current "$mm2" "$mm2_hash"; then
        peer_log "fetching MirrorMaker 2 $SPOOL_KAFKA_VERSION jars into $mm2"
        copy_jars "$mm2_pom" "$mm2"
        # One copy of each jar on the classpath: what libs has already stays there.
        for jar in "$mm2.tmp"/*.jar; do
            [[ ! -e "$dir/libs/${jar##*/}" ]] || rm "$jar"
        done
        rm -rf "$mm2" && mv "$mm2.tmp" "$mm2"
        peer_mark_current "$mm2" "$mm2_hash"
    fi
fi

if ((jars_only)); then
    echo "$dir"
    exit 0
fi

# The checker is compiled here rather than by CMake so that CTest runs need no JDK logic and a warm
# run reuses the classes: one javac per source change.
src=$SPOOL_REPO_ROOT/tests/compat/java/src
classes=$dir/compat-classes
mapfile -t sources < <(find "$src" -name '*.java' | sort)
src_hash=$(peer_hash "$jars_hash" "${sources[@]}")
if ((${#sources[@]})) && ! peer_is_current "$classes" "$src_hash"; then
    peer_log "compiling the Java compatibility checker into $classes"
    command -v javac >/dev/null || { peer_log "javac is missing (apt-get install default-jdk)"; exit 1; }
    rm -rf "$classes" && mkdir -p "$classes"
    javac -Xlint:deprecation -nowarn -encoding UTF-8 -d "$classes" -cp "$dir/libs/*" "${sources[@]}" >&2
    peer_mark_current "$classes" "$src_hash"
fi
echo "$dir"
