"""ftgen.py: writes synthetic feedtrace trace files (docs/FORMAT.md, version 1)
for converter tests: exact, hand-planted events of any kind in events.def,
including CUDA records before the CUDA hooks exist. Events are given in any
order; each thread's are written in time order, in EVENTS chunks flushed
every `flush_ns` of trace time, as the recorder does.

    w = TraceFile(path, pid=100, cmdline=["prog", "arg"])
    w.thread(100, "main")
    w.event(100, "CU_LAUNCH_KERNEL", ts, dur, sym="cuLaunchKernel", sync=0, stream=0x10)
    w.close()
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))
import ftdefs  # noqa: E402  (the one reader of events.def)

ROOT = ftdefs.ROOT
PACK = {"i32": "<i", "u32": "<I", "x32": "<I", "str": "<I", "u64": "<Q", "i64": "<q", "ptr": "<Q"}


def load_kinds(path=ftdefs.EVENTS_DEF):
    """{ID: (number, name, nslots, [(field, type, offset)])} in events.def order."""
    return {k.id: (k.number, k.name, k.nslots, [tuple(f) for f in k.fields])
            for k in ftdefs.kinds(path).values()}


KINDS = load_kinds()


def fnv(b):
    h = 2166136261
    for x in b:
        h = ((h ^ x) * 16777619) & 0xFFFFFFFF
    return h


def chunk(ctype, payload, codec=0):
    head = struct.pack("<IHHIII", 0x4B435446, ctype, codec, len(payload), len(payload), fnv(payload))
    return head + struct.pack("<I", fnv(head)) + payload


class TraceFile:
    def __init__(self, path, pid, cmdline=("prog",), start_ns=1_000_000_000_000, ppid=1,
                 flush_ns=200_000_000, real_ns=1_700_000_000_000_000_000, version=1,
                 run_id=0, host="testhost", rank=None, world=0, job=""):
        self.path, self.pid, self.start, self.flush_ns = path, pid, start_ns, flush_ns
        self.strings, self.threads, self.events, self.cpus = {}, [], [], []
        self.faults, self.runqs = [], []
        self.cmdline = list(cmdline)
        # run_id: 0 as in files written before run ids (docs/FORMAT.md);
        # rank: the launcher's identity (world 0: none; launcher 1: torchrun)
        hdr = struct.pack("<8sHHIiiIIQQQQII64sQiiiI48s", b"FEEDTRC\n", version, 256, 2, pid,
                          ppid, 0, 15, start_ns, start_ns, real_ns, 0, 16384, 0, host.encode(),
                          run_id, -1 if rank is None else rank, -1, world, 1 if world else 0,
                          job.encode())
        self.header = hdr + b"\0" * (256 - len(hdr))

    def string(self, s):
        if s not in self.strings:
            self.strings[s] = len(self.strings) + 1
        return self.strings[s]

    def thread(self, tid, name, main=False):
        self.threads.append((tid, name, main))

    def cpu(self, tid, ts, cpu_ns):
        """A CPU-time sample: thread tid had used cpu_ns of CPU at ts (ticks = ns here)."""
        self.cpus.append((ts, tid, cpu_ns))

    def fault(self, tid, ts, majflt, blkio_ns=0, base=False, delayacct=False):
        """A FAULTS sample: thread tid (0: the process) had taken majflt major
        page faults (and waited blkio_ns for block I/O) by ts; base: the
        baseline sweep; delayacct: blkio_ns is meaningful."""
        self.faults.append((ts, tid, (1 if base else 0) | (2 if delayacct else 0), majflt,
                            blkio_ns))

    def runq(self, tid, ts, wait_ns):
        """A SCHED sample: thread tid had spent wait_ns runnable, waiting for
        a core, by ts."""
        self.runqs.append((ts, tid, wait_ns))

    def event(self, tid, kind, ts, dur, /, slots=None, **fields):
        """ts, dur in ns (ts absolute CLOCK_MONOTONIC); str fields take text
        (a field may be named kind: the parameters before it are positional).
        slots: fewer slots than the kind has today (a record of an older
        recorder: the fields past them are not written)."""
        num, _name, nslots, layout = KINDS[kind]
        if slots is not None:
            nslots = slots
            layout = [x for x in layout if x[2] < 32 * slots]
        rec = bytearray(32 * nslots)
        struct.pack_into("<QIHBB", rec, 0, ts, dur, num, nslots, 0)
        for fname, typ, off in layout:
            if fname in fields:
                v = fields.pop(fname)
                if typ == "str":
                    v = self.string(v) if v else 0
                struct.pack_into(PACK[typ], rec, off, v)
        assert not fields, "unknown fields %s for %s" % (list(fields), kind)
        self.events.append((ts, tid, bytes(rec)))

    def chunks(self, lost=None):
        """The file's chunks, in write order, as (type, payload) pairs."""
        out = []
        args = b"".join(a.encode() + b"\0" for a in self.cmdline)
        strs = b""
        for s, i in sorted(self.strings.items(), key=lambda x: x[1]):
            b = s.encode() + b"\0"
            strs += struct.pack("<II", i, len(b)) + b + b"\0" * (-len(b) % 8)
        if strs:
            out.append((2, strs))
        out.append((5, struct.pack("<IIII", len(self.cmdline), len(args), 0, 0) + args))
        for tid, name, main in self.threads:
            out.append((3, struct.pack("<iI24s", tid, 1 if main else 0, name.encode()[:23])))
        # per-thread time order, flushed by rounds of flush_ns
        per = {}
        for ts, tid, rec in sorted(self.events, key=lambda e: e[0]):
            per.setdefault(tid, []).append((ts, rec))
        last = max((e[0] for e in self.events), default=self.start)
        first_slot = {}
        rnd = self.start
        while rnd <= last + self.flush_ns:
            rnd += self.flush_ns
            for tid in sorted(per):
                recs = [r for ts, r in per[tid] if ts < rnd]
                per[tid] = [(ts, r) for ts, r in per[tid] if ts >= rnd]
                if not recs:
                    continue
                body = b"".join(recs)
                n = len(body) // 32
                lt = (lost or {}).get(tid, 0)
                out.append((1, struct.pack("<iIQQQ", tid, n, first_slot.get(tid, 0), lt, 0) + body))
                first_slot[tid] = first_slot.get(tid, 0) + n
        if self.cpus:
            out.append((8, b"".join(struct.pack("<iIQQ", tid, 0, ts, c)
                                    for ts, tid, c in sorted(self.cpus))))
        if self.runqs:
            out.append((11, b"".join(struct.pack("<iIQQ", tid, 0, ts, ns)
                                     for ts, tid, ns in sorted(self.runqs))))
        if self.faults:
            out.append((10, b"".join(struct.pack("<iIQQQ", tid, fl, ts, n, ns)
                                     for ts, tid, fl, n, ns in sorted(self.faults))))
        out.append((4, struct.pack("<QQQQ", last + 1000, last + 1000, 0, 0)))
        nrec = len(self.events)
        out.append((6, struct.pack("<IiQQQQQ", 1, 0, nrec, sum((lost or {}).values()),
                                   len(self.threads), 0, 0)))
        return out

    def close(self, lost=None, chunks=None):
        with open(self.path, "wb") as f:
            f.write(self.header)
            for ctype, payload in (chunks if chunks is not None else self.chunks(lost)):
                f.write(chunk(ctype, payload))
