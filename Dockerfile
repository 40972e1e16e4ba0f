# syntax=docker/dockerfile:1
# Multi-stage Debian 12 build of spool-broker and spool-operator.
#
#   docker build --target broker   -t spool-broker .
#   docker build --target operator -t spool-operator .
#   docker build --target etcd     -t spool-etcd .     # the chart's metadata store
#   docker build --target kcat     -t spool-kcat .     # a Kafka client pod for tests and debugging
#
# The build stage installs exactly the Debian packages scripts/setup.sh lists; each runtime stage
# installs only the shared libraries its binary links, found with ldd + dpkg -S
# (scripts/image/runtime-packages.sh), so the image follows the code's dependencies without a
# second hand-kept list.
#
# A context with an image/bin/ directory (scripts/k8s/images.sh: the e2e node's images, from a
# context of only image/bin/ and the two scripts) supplies already built binaries instead of the
# tree: they are stripped and resolved the same way. The repository's own context never has one
# (.dockerignore), so a build from it always compiles.

FROM debian:12 AS build
WORKDIR /src
COPY scripts/setup.sh scripts/setup.sh
RUN scripts/setup.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN mkdir -p /out/bin \
 && if [ -d image/bin ]; then cp image/bin/* /out/bin/; else \
      cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPOOL_BENCH=OFF \
      && cmake --build /build --target spool-broker spool-operator \
      && cp /build/broker/app/spool-broker /build/operator/app/spool-operator /out/bin/; \
    fi
RUN scripts/image/runtime-packages.sh

FROM debian:12-slim AS runtime-base
RUN groupadd --gid 10001 spool && useradd --uid 10001 --gid spool --no-create-home spool

FROM runtime-base AS operator
COPY --from=build /out/spool-operator.packages /tmp/packages
RUN apt-get update -qq \
 && xargs -a /tmp/packages apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* /tmp/packages
COPY --from=build /out/bin/spool-operator /usr/local/bin/spool-operator
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/spool-operator"]

FROM runtime-base AS broker
COPY --from=build /out/spool-broker.packages /tmp/packages
RUN apt-get update -qq \
 && xargs -a /tmp/packages apt-get install -y --no-install-recommends \
 && rm -rf /var/lib/apt/lists/* /tmp/packages \
 && mkdir -p /var/lib/spool /etc/spool && chown 10001:10001 /var/lib/spool
COPY --from=build /out/bin/spool-broker /usr/local/bin/spool-broker
USER 10001:10001
VOLUME /var/lib/spool
EXPOSE 9092 9644
ENTRYPOINT ["/usr/local/bin/spool-broker"]

# The etcd the chart deploys for the brokers' metadata (charts/spool/templates/etcd.yaml):
# Debian's etcd-server (3.4), the same etcd the cluster tests and scripts/run-cluster.sh run, and
# etcdctl (etcd-client) for `kubectl exec` snapshots and defragmentation. Its data directory is
# the volume at /var/lib/etcd; nothing else is written, so the root stays read-only.
FROM runtime-base AS etcd
RUN apt-get update -qq \
 && apt-get install -y --no-install-recommends etcd-server etcd-client \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /var/lib/etcd && chown 10001:10001 /var/lib/etcd
USER 10001:10001
VOLUME /var/lib/etcd
EXPOSE 2379
ENTRYPOINT ["/usr/bin/etcd"]

# kcat (Debian's) in a pod: a producer and consumer inside the Kubernetes cluster, where the
# brokers' advertised per-pod DNS names resolve.
FROM runtime-base AS kcat
RUN apt-get update -qq \
 && apt-get install -y --no-install-recommends kcat \
 && rm -rf /var/lib/apt/lists/*
USER 10001:10001
ENTRYPOINT ["/usr/bin/kcat"]
