#!/usr/bin/env python3
"""gen_corpus.py OUTDIR [TRACE.ft ...]: seed corpus for tests/fuzz/fuzz_reader.c.

From each real trace file given (recorded by scripts/fuzz.sh from a few
tests/progs programs) it writes:
  real-N.ft    the file as recorded (cut after whole chunks to --max bytes);
  raw-N.ft     the same chunks re-encoded with codec 0 (raw), EVENTS chunks
               unshuffled, so that mutations hit records, strings and
               prefixes directly instead of zstd frames and checksums;
  cut-N.ft     the raw file cut inside its last chunk (a killed process).
Then synthetic traces from tests/ftgen.py (CUDA launches, hidden syncs,
reads, locks, several threads, a TSC clock), raw, and pairs of files
joined into one input (the harness splits at the second file magic).
Every seed is at most --max bytes (default 48 KiB), but for the large
ones, past 64 KiB, made from the first real trace (--big, default on):
  big-zero-*.ft     a zero-filled tail of 256 KiB and of 1 MiB (what a
                    crash or power loss leaves);
  big-repeat.ft     its chunks written again and again (a repeated chunk);
  big-magics.ft     a tail full of chunk magics whose headers do not check.
"""
import argparse
import ctypes
import ctypes.util
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import ftgen  # noqa: E402

HDR = 256
CH = 24
_zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
_zstd.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
_zstd.ZSTD_getFrameContentSize.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_decompress.restype = ctypes.c_size_t
_zstd.ZSTD_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
_zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]


def unzstd(b, n):
    out = ctypes.create_string_buffer(max(n, 1))
    r = _zstd.ZSTD_decompress(out, n, b, len(b))
    if _zstd.ZSTD_isError(r) or r != n:
        raise ValueError("bad zstd frame")
    return out.raw[:n]


def unshuffle(b):
    pre, body = b[:32], b[32:]
    n = len(body) // 32
    out = bytearray(len(body))
    prev = 0
    for i in range(n):
        slot = bytearray(body[p * n + i] for p in range(32))
        prev = (prev + struct.unpack_from("<Q", slot)[0]) & (2**64 - 1)
        struct.pack_into("<Q", slot, 0, prev)
        out[i * 32:(i + 1) * 32] = slot
    return pre + bytes(out)


def chunks(data):
    """(type, codec, stored payload, decoded payload) of each valid chunk."""
    off = HDR
    while off + CH <= len(data):
        magic, typ, codec, stored, raw, _ph, _hh = struct.unpack_from("<IHHIIII", data, off)
        if magic != 0x4B435446 or off + CH + stored > len(data):
            break
        payload = data[off + CH:off + CH + stored]
        dec = payload
        if codec in (1, 2):
            dec = unzstd(payload, raw)
            if codec == 2:
                dec = unshuffle(dec)
        yield typ, codec, payload, dec
        off += CH + stored


def cut_events(dec, room):
    """An EVENTS payload with whole slots only, fitting room bytes."""
    keep = max(0, (room - 32) // 32)
    tid, n = struct.unpack_from("<iI", dec)
    keep = min(keep, n)
    return struct.pack("<iI", tid, keep) + dec[8:32] + dec[32:32 + keep * 32]


def real_seeds(path, limit):
    data = open(path, "rb").read()
    real, raw = bytearray(data[:HDR]), bytearray(data[:HDR])
    real_open = raw_open = True
    for typ, codec, payload, dec in chunks(data):
        c = ftgen.chunk(typ, payload, codec)
        # codec and raw size as recorded: rebuild the header from the original
        if codec:
            head = struct.pack("<IHHIII", 0x4B435446, typ, codec, len(payload), len(dec),
                               ftgen.fnv(payload))
            c = head + struct.pack("<I", ftgen.fnv(head)) + payload
        if real_open and len(real) + len(c) <= limit:
            real += c
        else:
            real_open = False
        if not raw_open:
            continue
        room = limit - len(raw) - CH
        if typ == 1 and len(dec) > room:
            dec = cut_events(dec, room)
            raw_open = False
        if len(dec) <= room:
            raw += ftgen.chunk(typ, dec, 0)
        else:
            raw_open = False
    cut = bytes(raw[:len(raw) - 5]) if len(raw) > HDR + CH + 8 else None
    return bytes(real), bytes(raw), cut


def synthetic(tmp):
    MS = 1_000_000
    out = []
    # CUDA feeder: launches, a hidden sync, reads (tests/converter/test_convert.py's pattern)
    p = os.path.join(tmp, "syn-cuda.ft")
    w = ftgen.TraceFile(p, 100, ["train", "--steps", "3"])
    w.thread(100, "main", True)
    w.thread(101, "loader")
    t = w.start + MS
    for step in range(3):
        for k in range(3):
            w.event(100, "CU_LAUNCH_KERNEL", t, 10_000, sym="cuLaunchKernel", kernel="k%d" % k,
                    sync=0, stream=0x10, gx=64, gy=1, gz=1, bx=256, by=1, bz=1)
            t += 20_000
        w.event(100, "CU_MEMCPY_DTOH", t, 2 * MS, sym="cuMemcpyDtoH_v2", dir=2, sync=2,
                stream=0x10, bytes=4, pinned=0, site="#S:0x401000,0x402000", py="x.py:3 in f")
        w.event(100, "CU_STREAM_SYNC", t + 3 * MS, MS, sym="cuStreamSynchronize", sync=1,
                stream=0x10)
        w.event(101, "MUTEX_LOCK", t + 100, 3 * MS, lock=0x1234, ret=0)
        t += 5 * MS
        for _ in range(4):
            w.event(101, "READ", t, 400_000, fd=3, path="/data/x", req=512, ret=512)
            t += 500_000
        w.event(100, "SEM_WAIT", t, MS, sem=0x99, ret=0, err=0)
        t += 2 * MS
    w.close()
    out.append(p)
    # a killed, lossy second process on another host with a TSC clock
    p = os.path.join(tmp, "syn-tsc.ft")
    w = ftgen.TraceFile(p, 200, ["worker"], ppid=100)
    w.header = w.header[:12] + struct.pack("<I", 1) + w.header[16:]
    w.thread(200, "w", True)
    for i in range(6):
        w.event(200, "READ", w.start + i * MS, 1000, fd=4, path="/data/y", req=10, ret=10)
        w.event(200, "OPENAT", w.start + i * MS + 5000, 300, fd=5, path="/etc/z", flags=0, dirfd=-100)
    cs = [c for c in w.chunks(lost={200: 7}) if c[0] != 6]
    w.close(chunks=cs)
    out.append(p)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("traces", nargs="*")
    ap.add_argument("--max", type=int, default=48 * 1024)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    n = 0
    small = []
    real_first = b""
    files = list(a.traces) + synthetic(a.outdir)
    for i, path in enumerate(files):
        try:
            real, raw, cut = real_seeds(path, a.max)
        except (ValueError, struct.error) as e:
            print("gen_corpus: %s: %s, skipped" % (path, e), file=sys.stderr)
            continue
        if not real_first and len(real) > HDR:
            real_first = real
        for tag, blob in (("real", real), ("raw", raw), ("cut", cut)):
            if blob and len(blob) > HDR:
                open(os.path.join(a.outdir, "%s-%02d.ft" % (tag, i)), "wb").write(blob)
                n += 1
        if len(raw) <= a.max // 2:
            small.append(raw)
        if path.startswith(a.outdir):
            os.unlink(path)
    if real_first:
        big = {"big-zero-256k": real_first + b"\0" * (256 << 10),
               "big-zero-1m": real_first + b"\0" * (1 << 20),
               "big-magics": real_first + (b"FTCK" + b"\x01" * 20) * 6000}
        body = real_first[HDR:]
        rep = real_first
        while len(rep) < (160 << 10):
            rep += body
        big["big-repeat"] = rep
        for name, blob in big.items():
            open(os.path.join(a.outdir, name + ".ft"), "wb").write(blob)
            n += 1
    small.sort(key=len)
    for j in range(0, len(small) - 1, 2):
        if len(small[j]) + len(small[j + 1]) <= a.max:
            open(os.path.join(a.outdir, "pair-%02d.ft" % j), "wb").write(small[j] + small[j + 1])
            n += 1
    print("gen_corpus: %d seeds in %s" % (n, a.outdir))


if __name__ == "__main__":
    main()
