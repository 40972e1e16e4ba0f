# syntax=docker/dockerfile:1
# Multi-stage Debian 12 build of spool-broker and spool-operator.
#
#   docker build --target broker   -t spool-broker .
#   docker build --target operator -t spool-operator .
#   docker build --target etcd     -t spool-etcd .     # the chart's metadata store (etcd 3.7)
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

# The etcd the chart deploys for the brokers' metadata (charts/spool/templates/etcd.yaml): etcd
# v3.7.3, a maintained release, with etcdctl and etcdutl, built from etcd's published Go modules.
# scripts/image/etcd/ is the module: go.mod and go.sum pin etcd and every dependency (the same
# release scripts/k8s/build.sh builds for the test control plane). Debian 12's golang (1.19) is
# too old for etcd 3.7 (go 1.26), so the build uses the Go toolchain the Go module proxy serves as
# golang.org/toolchain, checked against its sha256 (the zip `go mod download` verified against
# sum.golang.org). A context whose scripts/image/etcd/bin/ holds the three binaries
# (scripts/k8s/images.sh etcd: built on the host from the same module and toolchain) supplies them
# instead; the repository's own context never has one (.dockerignore).
FROM debian:12 AS etcd-build
ARG GO_VERSION=1.26.10
ARG GO_SHA256=f64ecb0807852be2c98899561c45288a9ad57f4e88f3cd002ffabeccbd03bfe1
ARG GOPROXY=https://proxy.golang.org
WORKDIR /src
COPY scripts/image/etcd/ ./
RUN mkdir -p /out \
 && if [ -d bin ]; then cp bin/etcd bin/etcdctl bin/etcdutl /out/; else \
      apt-get update -qq \
      && apt-get install -y --no-install-recommends ca-certificates curl unzip \
      && curl -fsSL -o /tmp/go.zip \
           "$GOPROXY/golang.org/toolchain/@v/v0.0.1-go$GO_VERSION.linux-amd64.zip" \
      && echo "$GO_SHA256  /tmp/go.zip" | sha256sum -c - \
      && unzip -q /tmp/go.zip -d /tmp/go \
      && export PATH="/tmp/go/golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-amd64/bin:$PATH" \
                GOTOOLCHAIN=local GOFLAGS=-mod=readonly GOPROXY="$GOPROXY" CGO_ENABLED=0 \
      && go build -trimpath -ldflags "-s -w" -o /out/etcd . \
      && go build -trimpath -ldflags "-s -w" -o /out/etcdctl go.etcd.io/etcd/etcdctl/v3 \
      && go build -trimpath -ldflags "-s -w" -o /out/etcdutl go.etcd.io/etcd/etcdutl/v3; \
    fi \
 && /out/etcd --version && /out/etcdctl version && /out/etcdutl version

# The chart's etcd: static binaries on the slim base (getent and /bin/sh for the multi-member
# start, chart templates/etcd.yaml). Its data directory is the volume at /var/lib/etcd; nothing
# else is written, so the root stays read-only.
FROM runtime-base AS etcd
COPY --from=etcd-build /out/etcd /out/etcdctl /out/etcdutl /usr/local/bin/
RUN mkdir -p /var/lib/etcd && chown 10001:10001 /var/lib/etcd
USER 10001:10001
VOLUME /var/lib/etcd
EXPOSE 2379
ENTRYPOINT ["/usr/local/bin/etcd"]

# kcat (Debian's) in a pod: a producer and consumer inside the Kubernetes cluster, where the
# brokers' advertised per-pod DNS names resolve.
FROM runtime-base AS kcat
RUN apt-get update -qq \
 && apt-get install -y --no-install-recommends kcat \
 && rm -rf /var/lib/apt/lists/*
USER 10001:10001
ENTRYPOINT ["/usr/bin/kcat"]
