#!/usr/bin/env python3
"""Records the request frames real Kafka clients send, for protocol/tests/captures_test.cc.

Run by hand (see record.sh), never by the build or the tests:

    capture_proxy.py --listen 19092 --upstream 29092 --out DIR [--per-version 3]

A TCP proxy in front of a real Kafka broker whose advertised listener is the proxy's port, so
every connection of the client passes through it. Each client->broker frame is saved as
DIR/<api key>-<api version>-<n>.bin (size prefix stripped), at most --per-version frames per
(key, version) and none larger than 64 KiB.

ApiVersions responses are rewritten in place so each API's max version is at most Spool's
(read from protocol/schema), so clients use versions Spool's codec supports; other responses
are forwarded untouched.
"""

import argparse
import os
import re
import socket
import struct
import threading

lock = threading.Lock()
counts = {}


def spool_max_versions():
    schema = os.path.join(os.path.dirname(__file__), "..", "..", "schema")
    out = {}
    for name in os.listdir(schema):
        if name.endswith(".schema"):
            with open(os.path.join(schema, name)) as f:
                for m in re.finditer(r"^request \S+ key=(\d+) versions=\d+-?(\d*)", f.read(), re.M):
                    out[int(m.group(1))] = int(m.group(2) or 0)
    return out


SPOOL_MAX = spool_max_versions()


def read_uvarint(buf, at):
    value, shift = 0, 0
    while True:
        b = buf[at]
        at += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, at


def clamp_api_versions(body, version):
    """body: bytearray of an ApiVersions response body; lowers max versions in place."""
    at = 2  # error code
    if version >= 3:
        count, at = read_uvarint(body, at)
        count -= 1
    else:
        count = struct.unpack(">i", body[at:at + 4])[0]
        at += 4
    for _ in range(max(count, 0)):
        key, lo, hi = struct.unpack(">hhh", body[at:at + 6])
        if key in SPOOL_MAX and hi > SPOOL_MAX[key]:
            struct.pack_into(">h", body, at + 4, max(lo, SPOOL_MAX[key]))
        at += 6
        if version >= 3:
            tags, at = read_uvarint(body, at)
            for _ in range(tags):
                _, at = read_uvarint(body, at)
                size, at = read_uvarint(body, at)
                at += size


def save(out, frame, per_version):
    if len(frame) < 4 or len(frame) > 64 * 1024:
        return
    key, version = struct.unpack(">hh", frame[:4])
    with lock:
        n = counts.get((key, version), 0)
        if n >= per_version:
            return
        counts[(key, version)] = n + 1
    with open(os.path.join(out, "%d-%d-%d.bin" % (key, version, n)), "wb") as f:
        f.write(frame)


def pump_requests(src, dst, out, per_version, pending):
    buf = b""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            buf += data
            while len(buf) >= 4:
                size = struct.unpack(">i", buf[:4])[0]
                if len(buf) < 4 + size:
                    break
                frame = buf[4:4 + size]
                key, version, corr = struct.unpack(">hhi", frame[:8])
                if key == 18:
                    pending[corr] = version  # before forwarding: the answer may come at once
                save(out, frame, per_version)
                buf = buf[4 + size:]
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def pump_responses(src, dst, pending):
    buf = b""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            buf += data
            while len(buf) >= 4:
                size = struct.unpack(">i", buf[:4])[0]
                if len(buf) < 4 + size:
                    break
                frame = bytearray(buf[:4 + size])
                buf = buf[4 + size:]
                corr = struct.unpack(">i", frame[4:8])[0]
                if corr in pending:
                    body = frame[8:]  # ApiVersions responses always use header v0
                    clamp_api_versions(body, pending.pop(corr))
                    frame[8:] = body
                dst.sendall(bytes(frame))
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--upstream", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--per-version", type=int, default=3)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", args.listen))
    srv.listen(64)
    while True:
        client, _ = srv.accept()
        upstream = socket.create_connection(("127.0.0.1", args.upstream))
        pending = {}  # ApiVersions correlation id -> request version, per connection
        threading.Thread(target=pump_requests,
                         args=(client, upstream, args.out, args.per_version, pending),
                         daemon=True).start()
        threading.Thread(target=pump_responses, args=(upstream, client, pending),
                         daemon=True).start()


if __name__ == "__main__":
    main()
