"""docs/FORMAT.md is enough to read a trace: an independent reader written
from the spec alone (Python, the zstd command for frames) decodes a real
trace and agrees with `feedtrace dump` on every record."""
import glob
import struct
import subprocess

from conftest import prog

SLOT = 32


def fnv(b):
    h = 2166136261
    for x in b:
        h = ((h ^ x) * 16777619) & 0xFFFFFFFF
    return h


def unshuffle(planes, n):
    """Codec 2: byte b of slot i is planes[b*n + i]; the first 8 bytes of a
    slot are the difference from the previous slot's first 8 bytes."""
    out, prev = [], 0
    for i in range(n):
        slot = bytearray(planes[b * n + i] for b in range(SLOT))
        prev = (prev + struct.unpack_from("<Q", slot)[0]) & 0xFFFFFFFFFFFFFFFF
        struct.pack_into("<Q", slot, 0, prev)
        out.append(bytes(slot))
    return out


def read_spec(path):
    data = open(path, "rb").read()
    assert data[:8] == b"FEEDTRC\n"
    version, header_size = struct.unpack_from("<HH", data, 8)
    assert version == 1
    off, records, codecs, modules = header_size, [], [], []
    read_spec.modules_codecs = set()
    while off + 24 <= len(data):
        magic, ctype, codec, stored, raw, phash, hhash = struct.unpack_from("<IHHIIII", data, off)
        assert magic == 0x4B435446 and hhash == fnv(data[off:off + 20])
        payload = data[off + 24:off + 24 + stored]
        assert fnv(payload) == phash
        off += 24 + stored
        if ctype == 9:                  # MODULES: 32-byte entry, build-id, path
            if codec == 1:
                payload = subprocess.run(["zstd", "-d", "-c"], input=payload,
                                         capture_output=True, check=True).stdout
                assert len(payload) == raw
            else:
                assert codec == 0
            read_spec.modules_codecs.add(codec)
            o = 0
            while o + 32 <= len(payload):
                bias, lo, hi, plen, idlen = struct.unpack_from("<QQQIB", payload, o)
                bid = payload[o + 32:o + 32 + idlen]
                path = payload[o + 32 + idlen:o + 32 + idlen + plen - 1].decode()
                modules.append((path, bias, lo, hi, bid.hex()))
                o += 32 + (idlen + plen + 7) // 8 * 8
            continue
        if ctype != 1:
            continue
        codecs.append(codec)
        if codec == 0:
            body = payload
        else:
            body = subprocess.run(["zstd", "-d", "-c"], input=payload, capture_output=True,
                                  check=True).stdout
        assert len(body) == raw
        tid, nslots = struct.unpack_from("<iI", body, 0)
        slots = body[32:]
        if codec == 2:
            slots = b"".join(unshuffle(slots, nslots))
        i = 0
        while i < nslots:
            ts, dur, kind, ns, flags = struct.unpack_from("<QIHBB", slots, i * SLOT)
            records.append((tid, kind, slots[i * SLOT:(i + ns) * SLOT]))
            i += ns
    read_spec.modules = modules
    return records, codecs


def test_independent_reader_agrees(traced, tmp_path):
    f = tmp_path / "data.bin"
    f.write_bytes(b"z" * 600000)
    # many reads: several EVENTS chunks, shuffled and zstd-compressed
    r = traced([prog("io_read"), "reads", "6000", "100", str(f)], env={"FEEDTRACE_BUF_KB": "256"})
    assert r.returncode == 0, r.stderr
    [path] = glob.glob(r.dir + "/*.ft")
    recs, codecs = read_spec(path)
    # the shuffled, compressed codec was read (how many chunks depends on
    # when the flusher got the CPU: at least the final one at exit)
    assert codecs.count(2) >= 1
    reads = [x for x in recs if x[1] == 9]                 # kind 9: read (FORMAT.md)
    dumped = r.trace.calls("read", path=str(f))
    assert len(dumped) + r.trace.procs[0]["lost"] == 6000
    mine = [x for x in reads if struct.unpack_from("<i", x[2], 28)[0] == 100]
    assert len(mine) == len(dumped)
    # read payload: fd, path id, req, ret (FORMAT.md); req and ret as dumped
    assert all(struct.unpack_from("<II", x[2], 24) == (100, 100) for x in mine)
    assert len(recs) == sum(p["records"] for p in r.trace.procs)


def build_id(path):
    """the GNU build-id of an ELF file, as readelf -n prints it"""
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                         check=True).stdout
    return out.split("Build ID:")[1].split()[0]


def test_modules_chunk(traced, tmp_path):
    """MODULES (FORMAT.md): the program and libc, each once, with their
    build-ids; the program's range holds its code (bias + e_entry)."""
    r = traced([prog("io_read"), "reads", "10", "100", "/dev/zero"])
    assert r.returncode == 0, r.stderr
    [path] = glob.glob(r.dir + "/*.ft")
    read_spec(path)
    mods = read_spec.modules
    paths = [m[0] for m in mods]
    assert len(paths) == len(set(paths))
    me = [m for m in mods if m[0] == prog("io_read")]
    assert len(me) == 1 and me[0][4] == build_id(prog("io_read"))
    entry = struct.unpack_from("<Q", open(prog("io_read"), "rb").read(), 24)[0]
    assert me[0][2] <= me[0][1] + entry < me[0][3]
    libc = [m for m in mods if m[0].endswith("/libc.so.6")]
    assert len(libc) == 1 and libc[0][4] == build_id(libc[0][0])
    assert any(m[0].endswith("/libfeedtrace.so") for m in mods)
    # written by the flusher: one zstd frame (smaller than the entries)
    assert read_spec.modules_codecs == {1}


def test_modules_of_a_fork_child(traced):
    """A fork child that lives past its flusher's cycles lists the modules
    it inherited (from the parent's list, without walking the loader's:
    libfeedtrace/modules.c) each once, and a library it dlopens later."""
    code = ("import ctypes, os, time\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    time.sleep(0.2)\n"
            "    ctypes.CDLL('libbz2.so.1.0')\n"
            "    time.sleep(0.2)\n"
            "    os._exit(0)\n"
            "os.waitpid(pid, 0)\n")
    r = traced(["/usr/bin/python3", "-c", code], env={"FEEDTRACE_FLUSH_MS": "20"})
    assert r.returncode == 0, r.stderr
    mods = {}
    for path in glob.glob(r.dir + "/*.ft"):
        read_spec(path)
        mods[path] = [m[0] for m in read_spec.modules]
    assert len(mods) == 2
    child = [p for p, m in mods.items() if any(x.endswith("/libbz2.so.1.0") for x in m)]
    assert len(child) == 1, mods
    [parent] = [p for p in mods if p not in child]
    cm = mods[child[0]]
    assert len(cm) == len(set(cm))
    assert set(mods[parent]) <= set(cm)
    assert sum(x.endswith("/libbz2.so.1.0") for x in cm) == 1
