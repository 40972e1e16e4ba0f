"""A raw Kafka protocol client for the transaction requests a well-behaved producer never sends
in this order (txn_compat.py's partition_verification check): FindCoordinator v1,
InitProducerId v1, AddPartitionsToTxn v1, EndTxn v1 and Produce v8 of a transactional v2 record
batch, all non-flexible versions every Kafka 4.x broker and Spool serve. The broker is assumed to
be its own transaction coordinator (the one-broker targets of txn_compat.py)."""

import socket
import struct
import time

FIND_COORDINATOR, INIT_PRODUCER_ID, ADD_PARTITIONS_TO_TXN, END_TXN, PRODUCE = 10, 22, 24, 26, 0

_CRC32C = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC32C.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def _string(s):
    if s is None:
        return struct.pack(">h", -1)
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def _varint(v):
    v = (v << 1) ^ (v >> 63)  # zigzag
    out = bytearray()
    while True:
        if v & ~0x7F:
            out.append((v & 0x7F) | 0x80)
            v >>= 7
        else:
            out.append(v)
            return bytes(out)


def txn_batch(pid, epoch, seq, value):
    """One transactional record batch (magic 2) of one record."""
    now = int(time.time() * 1000)
    body = b"\x00" + _varint(0) + _varint(0) + _varint(-1) + _varint(len(value)) + value + _varint(0)
    record = _varint(len(body)) + body
    after_crc = (struct.pack(">hiqqqhii", 0x10, 0, now, now, pid, epoch, seq, 1) + record)
    crc = crc32c(after_crc)
    after_length = struct.pack(">ibI", -1, 2, crc) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string(self):
        n = self.take(">h")
        if n < 0:
            return None
        s = self.data[self.pos:self.pos + n].decode()
        self.pos += n
        return s


class Client:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=30)
        self.correlation = 0

    def close(self):
        self.sock.close()

    def _read(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise AssertionError("the broker closed the connection")
            buf += chunk
        return buf

    def call(self, api, version, body):
        self.correlation += 1
        frame = struct.pack(">hhi", api, version, self.correlation) + _string("raw-txn") + body
        self.sock.sendall(struct.pack(">i", len(frame)) + frame)
        size = struct.unpack(">i", self._read(4))[0]
        r = Reader(self._read(size))
        if r.take(">i") != self.correlation:
            raise AssertionError("correlation id mismatch")
        return r

    def find_coordinator(self, txn_id):
        r = self.call(FIND_COORDINATOR, 1, _string(txn_id) + struct.pack(">b", 1))
        r.take(">i")
        return r.take(">h")

    def init_producer_id(self, txn_id, timeout_ms=60000):
        r = self.call(INIT_PRODUCER_ID, 1, _string(txn_id) + struct.pack(">i", timeout_ms))
        r.take(">i")
        return r.take(">hqh")  # error, producer id, epoch

    def add_partitions(self, txn_id, pid, epoch, topic, partitions):
        body = (_string(txn_id) + struct.pack(">qh", pid, epoch) + struct.pack(">i", 1) +
                _string(topic) + struct.pack(">i", len(partitions)) +
                b"".join(struct.pack(">i", p) for p in partitions))
        r = self.call(ADD_PARTITIONS_TO_TXN, 1, body)
        r.take(">i")
        out = {}
        for _ in range(r.take(">i")):
            name = r.string()
            for _ in range(r.take(">i")):
                p, e = r.take(">ih")
                out[f"{name}-{p}"] = e
        return out

    def end_txn(self, txn_id, pid, epoch, commit):
        r = self.call(END_TXN, 1, _string(txn_id) + struct.pack(">qhb", pid, epoch, int(commit)))
        r.take(">i")
        return r.take(">h")

    def produce(self, txn_id, topic, partition, batch):
        """Produce v8, acks=all: the partition's (error code, error message)."""
        body = (_string(txn_id) + struct.pack(">hi", -1, 30000) + struct.pack(">i", 1) +
                _string(topic) + struct.pack(">i", 1) + struct.pack(">ii", partition, len(batch)) +
                batch)
        r = self.call(PRODUCE, 8, body)
        r.take(">i")
        r.string()
        r.take(">i")
        r.take(">i")
        error = r.take(">h")
        r.take(">qqq")  # base offset, log append time, log start offset
        for _ in range(r.take(">i")):  # record errors
            r.take(">i")
            r.string()
        return error, r.string()
