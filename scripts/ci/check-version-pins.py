#!/usr/bin/env python3
"""Fails when two places that pin one dependency's version disagree.

etcd is built twice from its Go modules: the Kubernetes test parts (scripts/k8s/build.sh,
ETCD_VERSION) and the chart's etcd image (scripts/image/etcd/go.mod). The chart, the node tests and
the docs then talk about one etcd; a bump in one place alone would quietly test one version and
ship another.
"""
import re
import sys
from pathlib import Path


def one(pattern: str, text: str, where: str) -> set[str]:
    found = set(re.findall(pattern, text, re.MULTILINE))
    if not found:
        sys.exit(f"version pins: no etcd version found in {where} (pattern {pattern!r})")
    return found


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    build = root / "scripts/k8s/build.sh"
    gomod = root / "scripts/image/etcd/go.mod"
    k8s = one(r'^ETCD_VERSION="\$\{SPOOL_ETCD_VERSION:-(v[0-9.]+)\}"', build.read_text(), str(build))
    image = one(r"^\s*go\.etcd\.io/etcd/(?:server|etcdctl|etcdutl)/v3 (v[0-9.]+)\s*$",
                gomod.read_text(), str(gomod))
    pins = {f"{build} ETCD_VERSION": k8s, f"{gomod} (server, etcdctl, etcdutl)": image}
    versions = k8s | image
    for where, v in pins.items():
        print(f"{where}: {', '.join(sorted(v))}")
    if len(versions) != 1:
        print(f"version pins: etcd is pinned at {', '.join(sorted(versions))}: keep one version",
              file=sys.stderr)
        return 1
    print(f"version pins: etcd {versions.pop()} everywhere")
    return 0


if __name__ == "__main__":
    sys.exit(main())
