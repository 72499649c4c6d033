#!/usr/bin/env python3
"""check_pftrace.py - structural checker for Perfetto protobuf traces.

Owns the rules Perfetto's trace processor applies silently (dropped events,
skipped packets, unended slices) as checks on a .pftrace file, decoded with
`protoc --decode=perfetto.protos.Trace` against converter/out/perfetto.proto.

Usage: check_pftrace.py FILE [--expect-slices N] [--count-name NAME] [--json]
       check_pftrace.py --self-test

"Slices" are SLICE_BEGIN events (each must be closed by a SLICE_END on its
track); instants are counted apart. In Perfetto's `slice` table both are rows,
so --count-name counts slices and instants of that name together.
The file is framed here and handed to protoc in batches of packets, so
neither this script nor protoc holds the whole trace. Exit status: 0 clean,
1 violations (or unmet expectations), 2 usage or decode errors.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from array import array

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_PROTO = os.path.join(ROOT, "converter", "out", "perfetto.proto")
BATCH_BYTES = 8 << 20

TYPES = {"TYPE_SLICE_BEGIN": 1, "TYPE_SLICE_END": 2, "TYPE_INSTANT": 3,
         "TYPE_COUNTER": 4}
INTERN_KINDS = ("event_names", "event_categories", "debug_annotation_names",
                "debug_annotation_string_values")
BOOTTIME = 6


class DecodeError(Exception):
    pass


# --------------------------------------------------------------------------
# Framing and text-format decoding
# --------------------------------------------------------------------------

def read_varint(buf, pos):
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise DecodeError("truncated varint at byte %d" % pos)
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DecodeError("varint too long at byte %d" % pos)


def packet_batches(f, batch_bytes=BATCH_BYTES):
    """Yields (raw bytes of whole Trace.packet fields, packet count)."""
    buf = b""
    eof = False
    while True:
        if not eof and len(buf) < batch_bytes:
            more = f.read(batch_bytes)
            eof = not more
            buf += more
        pos = n = 0
        while pos < len(buf):
            start = pos
            try:
                tag, pos = read_varint(buf, pos)
                if tag != 0x0A:
                    raise DecodeError(
                        "top-level field tag 0x%x at file offset %d is not "
                        "Trace.packet (field 1, length-delimited)" % (tag, start))
                length, pos = read_varint(buf, pos)
            except DecodeError:
                if eof or len(buf) - start > 16:
                    raise
                pos = start
                break
            if pos + length > len(buf):
                pos = start
                break
            pos += length
            n += 1
            if pos >= batch_bytes:
                break
        if n:
            yield buf[:pos], n
            buf = buf[pos:]
        elif eof:
            if buf:
                raise DecodeError("trace ends inside a packet (%d bytes left)"
                                  % len(buf))
            return
        elif len(buf) >= batch_bytes:        # one packet bigger than a batch
            batch_bytes *= 2


def unescape(s):
    """Decodes a protoc text-format string literal body (C escapes)."""
    out = bytearray()
    i, n = 0, len(s)
    simple = {"n": 10, "r": 13, "t": 9, '"': 34, "'": 39, "\\": 92,
              "a": 7, "b": 8, "f": 12, "v": 11, "?": 63}
    while i < n:
        c = s[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        i += 1
        c = s[i] if i < n else ""
        if c in simple:
            out.append(simple[c])
            i += 1
        elif c in "01234567":
            j = i
            while j < n and j - i < 3 and s[j] in "01234567":
                j += 1
            out.append(int(s[i:j], 8) & 0xFF)
            i = j
        elif c == "x":
            j = i + 1
            while j < n and j - i < 3 and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(s[i + 1:j], 16))
            i = j
        else:
            out += ("\\" + c).encode("utf-8")
            i += 1
    return out.decode("utf-8", "replace")


def parse_value(v):
    if v.startswith('"'):
        return unescape(v[1:-1])
    if v == "true":
        return True
    if v == "false":
        return False
    try:
        return int(v, 0)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v                              # enum name


def parse_packets(lines):
    """Yields each top-level `packet { ... }` of protoc text output as a dict
    of field name -> list of values (messages are dicts)."""
    stack = []
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line.endswith("{"):
            msg = {}
            if stack:
                stack[-1].setdefault(line[:-1].strip(), []).append(msg)
            stack.append(msg)
        elif line == "}":
            msg = stack.pop()
            if not stack:
                yield msg
        else:
            key, _, val = line.partition(":")
            if not stack:
                raise DecodeError("unexpected protoc output: %r" % line)
            stack[-1].setdefault(key.strip(), []).append(
                parse_value(val.strip()))
    if stack:
        raise DecodeError("protoc output ended inside a message")


def one(msg, key, default=None):
    v = msg.get(key)
    return v[0] if v else default


def decode_file(path, proto, protoc="protoc"):
    """Yields the packets of a .pftrace, decoding it batch by batch."""
    inc = os.path.dirname(os.path.abspath(proto))
    with open(path, "rb") as f:
        for raw, n in packet_batches(f):
            p = subprocess.run(
                [protoc, "--decode=perfetto.protos.Trace", "-I", inc,
                 os.path.basename(proto)],
                input=raw, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            if p.returncode != 0:
                raise DecodeError("protoc --decode failed: %s"
                                  % p.stderr.decode(errors="replace").strip())
            got = 0
            for pkt in parse_packets(p.stdout.decode("utf-8").splitlines()):
                got += 1
                yield pkt
            # An empty packet prints nothing: keep the numbering right.
            for _ in range(n - got):
                yield {}


# --------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------

class Track:
    def __init__(self, uuid, name, kind, parent):
        self.uuid, self.name, self.kind, self.parent = uuid, name, kind, parent
        self.ts = array("Q")        # BEGIN/END timestamps, file order
        self.ty = array("b")        # 1 BEGIN, 2 END
        self.in_order = True
        self.slices = self.instants = self.counters = 0
        self.max_depth = 0


class Sequence:
    def __init__(self):
        self.cleared = False
        self.resets = 0
        self.tables = {k: {} for k in INTERN_KINDS}


class Checker:
    def __init__(self, count_names=(), max_violations=20):
        self.violations = []
        self.nviolations = 0
        self.max_violations = max_violations
        self.packets = 0
        self.tracks = {}
        self.seqs = {}
        self.clocks = {BOOTTIME}
        self.flows = {}
        self.interned = 0
        self.count_names = {n: 0 for n in count_names}

    def bad(self, msg):
        self.nviolations += 1
        if len(self.violations) < self.max_violations:
            self.violations.append(msg)

    def track_desc(self, where, td):
        uuid = one(td, "uuid", 0)
        if not uuid:
            self.bad("%s: TrackDescriptor without uuid" % where)
            return
        proc, thr = one(td, "process"), one(td, "thread")
        if "counter" in td:
            kind = "counter"
        elif thr is not None:
            kind = "thread"
            if not one(thr, "pid", 0) or not one(thr, "tid", 0):
                self.bad("%s: thread track %d needs non-zero pid and tid"
                         % (where, uuid))
        elif proc is not None:
            kind = "process"
            if not one(proc, "pid", 0):
                self.bad("%s: process track %d needs a non-zero pid"
                         % (where, uuid))
        else:
            kind = "named"
        name = one(td, "name") or (proc and one(proc, "process_name")) or \
            (thr and one(thr, "thread_name")) or ""
        parent = one(td, "parent_uuid", 0)
        if parent and parent not in self.tracks:
            self.bad("%s: track %d (%s) has undeclared parent_uuid %d"
                     % (where, uuid, name, parent))
        old = self.tracks.get(uuid)
        if old is not None:
            if old.kind != kind:
                self.bad("%s: track %d redeclared as %s (was %s)"
                         % (where, uuid, kind, old.kind))
            return
        self.tracks[uuid] = Track(uuid, name, kind, parent)

    def annotations(self, where, seq, anns):
        for a in anns:
            iid = one(a, "name_iid")
            if iid is not None and iid not in seq.tables["debug_annotation_names"]:
                self.bad("%s: debug annotation name_iid %d not defined on its "
                         "sequence since the last clear" % (where, iid))
            iid = one(a, "string_value_iid")
            if iid is not None and \
                    iid not in seq.tables["debug_annotation_string_values"]:
                self.bad("%s: debug annotation string_value_iid %d not defined "
                         "on its sequence since the last clear" % (where, iid))
            self.annotations(where, seq, a.get("dict_entries", ()))
            self.annotations(where, seq, a.get("array_values", ()))

    def track_event(self, where, pkt, seq, te):
        ts = one(pkt, "timestamp")
        if ts is None:
            self.bad("%s: track event without timestamp" % where)
            ts = 0
        ty = one(te, "type", 0)
        ty = TYPES.get(ty, ty)
        uuid = one(te, "track_uuid", 0)
        t = self.tracks.get(uuid)
        if not uuid:
            self.bad("%s: track event without track_uuid" % where)
        elif t is None:
            self.bad("%s: track_uuid %d used before any TrackDescriptor "
                     "declares it (Perfetto drops the event)" % (where, uuid))

        name = one(te, "name")
        iid = one(te, "name_iid")
        if iid is not None:
            name = seq.tables["event_names"].get(iid) if seq else None
            if name is None:
                self.bad("%s: name_iid %d not defined on its sequence since "
                         "the last clear" % (where, iid))
        for iid in te.get("category_iids", ()):
            if seq is None or iid not in seq.tables["event_categories"]:
                self.bad("%s: category_iid %d not defined on its sequence"
                         % (where, iid))
        if seq is not None:
            self.annotations(where, seq, te.get("debug_annotations", ()))
        for key, end in (("flow_ids", 0), ("terminating_flow_ids", 1)):
            for fid in te.get(key, ()):
                self.flows[fid] = self.flows.get(fid, 0) + 1

        if ty == 4:
            if "counter_value" not in te and "double_counter_value" not in te:
                self.bad("%s: counter event without a value" % where)
            if t is not None:
                if t.kind != "counter":
                    self.bad("%s: counter event on non-counter track %d (%s)"
                             % (where, uuid, t.name))
                t.counters += 1
            return
        if ty not in (1, 2, 3):
            self.bad("%s: track event of unknown type %r" % (where, ty))
            return
        if t is not None and t.kind == "counter":
            self.bad("%s: %s on counter track %d (%s)"
                     % (where, ("slice begin", "slice end", "instant")[ty - 1],
                        uuid, t.name))
        if ty != 2 and name in self.count_names:
            self.count_names[name] += 1
        if t is None:
            return
        if ty == 3:
            t.instants += 1
            return
        if ty == 1:
            t.slices += 1
        if t.ts and ts < t.ts[-1]:
            t.in_order = False
        t.ts.append(ts)
        t.ty.append(ty)

    def packet(self, pkt):
        self.packets += 1
        where = "packet %d" % self.packets
        sid = one(pkt, "trusted_packet_sequence_id")
        flags = one(pkt, "sequence_flags", 0)
        te, td = one(pkt, "track_event"), one(pkt, "track_descriptor")
        seq = None
        if sid is None:
            if te is not None:
                self.bad("%s: track event without trusted_packet_sequence_id "
                         "(Perfetto drops it)" % where)
            if "interned_data" in pkt:
                self.bad("%s: interned data without a sequence" % where)
        else:
            seq = self.seqs.get(sid)
            if seq is None:
                seq = self.seqs[sid] = Sequence()
                if flags & 3 != 3:
                    self.bad("%s: first packet of sequence %d has "
                             "sequence_flags %d, expected 3 (CLEARED|NEEDS)"
                             % (where, sid, flags))
            if flags & 1:
                if seq.cleared:
                    seq.resets += 1
                seq.cleared = True
                for tab in seq.tables.values():
                    tab.clear()
            elif flags & 2 and not seq.cleared:
                self.bad("%s: NEEDS_INCREMENTAL_STATE before any "
                         "INCREMENTAL_STATE_CLEARED on sequence %d (Perfetto "
                         "skips it)" % (where, sid))
            idata = one(pkt, "interned_data")
            if idata is not None:
                for kind in INTERN_KINDS:
                    tab = seq.tables[kind]
                    for e in idata.get(kind, ()):
                        iid = one(e, "iid")
                        val = one(e, "str" if kind.endswith("values") else "name")
                        if iid is None:
                            self.bad("%s: %s entry without iid" % (where, kind))
                        elif iid in tab and tab[iid] != val:
                            self.bad("%s: %s iid %d redefined (%r, was %r) "
                                     "without a clear" % (where, kind, iid,
                                                          val, tab[iid]))
                        else:
                            tab[iid] = val
                            self.interned += 1
        cid = one(pkt, "timestamp_clock_id")
        if cid is not None and cid not in self.clocks:
            self.bad("%s: timestamp_clock_id %d not in any earlier "
                     "ClockSnapshot" % (where, cid))
        cs = one(pkt, "clock_snapshot")
        if cs is not None:
            for c in cs.get("clocks", ()):
                self.clocks.add(one(c, "clock_id"))
        if td is not None:
            self.track_desc(where, td)
        if te is not None:
            self.track_event(where, pkt, seq, te)

    def finish(self):
        """Balances slices per track in Perfetto's (time-sorted) order."""
        for t in self.tracks.values():
            order = range(len(t.ts))
            if not t.in_order:           # stable: equal ts keep file order
                order = sorted(order, key=t.ts.__getitem__)
            stack = []
            for i in order:
                if t.ty[i] == 1:
                    stack.append(t.ts[i])
                    t.max_depth = max(t.max_depth, len(stack))
                elif stack:
                    stack.pop()
                else:
                    self.bad("track %d (%s): SLICE_END at ts %d with no open "
                             "slice" % (t.uuid, t.name, t.ts[i]))
            if stack:
                self.bad("track %d (%s): %d slice(s) never ended (first open "
                         "one began at ts %d)" % (t.uuid, t.name, len(stack),
                                                  stack[0]))

    def summary(self):
        tr = self.tracks.values()
        fl = self.flows.values()
        return {
            "packets": self.packets,
            "tracks": len(self.tracks),
            "counter_tracks": sum(t.kind == "counter" for t in tr),
            "slices": sum(t.slices for t in tr),
            "instants": sum(t.instants for t in tr),
            "counters": sum(t.counters for t in tr),
            "flows": sum(n >= 2 for n in fl),
            "dangling_flows": sum(n < 2 for n in fl),
            "interned": self.interned,
            "resets": sum(s.resets for s in self.seqs.values()),
            "sequences": len(self.seqs),
            "max_depth": max((t.max_depth for t in tr), default=0),
        }


def check_file(path, args):
    c = Checker(args.count_name, args.max_violations)
    for pkt in decode_file(path, args.proto, args.protoc):
        c.packet(pkt)
    c.finish()
    return c


def run(args):
    try:
        c = check_file(args.file, args)
    except (DecodeError, OSError) as e:
        print("check_pftrace: %s: %s" % (args.file, e), file=sys.stderr)
        return 2
    s = c.summary()
    failed = []
    for key in ("slices", "instants", "counters", "flows", "tracks"):
        want = getattr(args, "expect_" + key)
        if want is not None and s[key] != want:
            failed.append("expected %d %s, found %d" % (want, key, s[key]))
    if args.min_slices is not None and s["slices"] < args.min_slices:
        failed.append("expected at least %d slices, found %d"
                      % (args.min_slices, s["slices"]))
    if args.min_resets is not None and s["resets"] < args.min_resets:
        failed.append("expected at least %d intern resets, found %d"
                      % (args.min_resets, s["resets"]))
    for spec in args.expect_name:
        name, _, n = spec.rpartition("=")
        got = c.count_names.get(name, 0)
        if got != int(n):
            failed.append("expected %s slices named %r, found %d"
                          % (n, name, got))

    for v in c.violations:
        print("check_pftrace: %s: %s" % (args.file, v), file=sys.stderr)
    if c.nviolations > len(c.violations):
        print("check_pftrace: %s: ... and %d more violation(s)"
              % (args.file, c.nviolations - len(c.violations)),
              file=sys.stderr)
    for f in failed:
        print("check_pftrace: %s: %s" % (args.file, f), file=sys.stderr)
    ok = not c.nviolations and not failed

    if args.json:
        s.update(file=args.file, ok=ok, violations=c.nviolations,
                 names=c.count_names,
                 per_track=[{"uuid": t.uuid, "name": t.name, "kind": t.kind,
                             "parent": t.parent, "slices": t.slices,
                             "instants": t.instants, "counters": t.counters,
                             "max_depth": t.max_depth}
                            for t in c.tracks.values()])
        print(json.dumps(s, indent=1))
    else:
        for name, n in c.count_names.items():
            print("%s: %d" % (name, n))
        print("check_pftrace: %s %s: %s" % (
            "OK" if ok else "FAIL", args.file,
            ", ".join("%d %s" % (v, k.replace("_", " "))
                      for k, v in s.items())))
    return 0 if ok else 1


# --------------------------------------------------------------------------
# Self-test: hand-written traces (encoded with protoc) that must pass or
# fail with a given message.
# --------------------------------------------------------------------------

GOOD_HEAD = """
packet { trusted_packet_sequence_id: 1 sequence_flags: 3
         track_descriptor { uuid: 1 thread { pid: 10 tid: 11 } } }
packet { trusted_packet_sequence_id: 1 sequence_flags: 2
         track_descriptor { uuid: 2 name: "c" counter { } } }
"""
BEGIN_A = """
packet { timestamp: 100 trusted_packet_sequence_id: 1 sequence_flags: 2
         interned_data { event_names { iid: 1 name: "a" } }
         track_event { type: TYPE_SLICE_BEGIN name_iid: 1 track_uuid: 1 } }
"""
END_1 = """
packet { timestamp: 200 trusted_packet_sequence_id: 1 sequence_flags: 2
         track_event { type: TYPE_SLICE_END track_uuid: 1 } }
"""
SELF_TESTS = [
    ("valid", GOOD_HEAD + BEGIN_A + END_1, None),
    ("end first in file, sorted ok", GOOD_HEAD + END_1 + BEGIN_A, None),
    ("unended", GOOD_HEAD + BEGIN_A, "never ended"),
    ("end without begin", GOOD_HEAD + END_1, "no open slice"),
    ("undeclared track", GOOD_HEAD + BEGIN_A.replace("track_uuid: 1",
                                                     "track_uuid: 7"),
     "before any TrackDescriptor"),
    ("first flags", GOOD_HEAD.replace("sequence_flags: 3",
                                      "sequence_flags: 2"), "expected 3"),
    ("undefined name iid", GOOD_HEAD + BEGIN_A.replace("name_iid: 1",
                                                       "name_iid: 5") + END_1,
     "name_iid 5 not defined"),
    ("iid used after clear", GOOD_HEAD + BEGIN_A + END_1 + """
packet { timestamp: 300 trusted_packet_sequence_id: 1 sequence_flags: 3
         track_event { type: TYPE_INSTANT name_iid: 1 track_uuid: 1 } }
""", "name_iid 1 not defined"),
    ("undefined annotation string", GOOD_HEAD + """
packet { timestamp: 300 trusted_packet_sequence_id: 1 sequence_flags: 2
         interned_data { event_names { iid: 1 name: "i" }
                         debug_annotation_names { iid: 1 name: "k" } }
         track_event { type: TYPE_INSTANT name_iid: 1 track_uuid: 1
                       debug_annotations { name_iid: 1 string_value_iid: 4 } } }
""", "string_value_iid 4"),
    ("counter on thread track", GOOD_HEAD + """
packet { timestamp: 300 trusted_packet_sequence_id: 1 sequence_flags: 2
         track_event { type: TYPE_COUNTER track_uuid: 1 counter_value: 3 } }
""", "non-counter track"),
    ("slice on counter track", GOOD_HEAD + BEGIN_A.replace(
        "track_uuid: 1", "track_uuid: 2") + END_1.replace(
        "track_uuid: 1", "track_uuid: 2"), "on counter track"),
    ("no sequence id", GOOD_HEAD + """
packet { timestamp: 300 track_event { type: TYPE_INSTANT name: "x"
                                      track_uuid: 1 } }
""", "without trusted_packet_sequence_id"),
]


def self_test(args):
    failures = 0
    inc = os.path.dirname(os.path.abspath(args.proto))
    with tempfile.TemporaryDirectory() as tmp:
        for i, (title, text, want) in enumerate(SELF_TESTS):
            path = os.path.join(tmp, "t%d.pftrace" % i)
            p = subprocess.run(
                [args.protoc, "--encode=perfetto.protos.Trace", "-I", inc,
                 os.path.basename(args.proto)],
                input=text.encode(), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE)
            if p.returncode != 0:
                print("self-test %s: protoc --encode failed: %s"
                      % (title, p.stderr.decode().strip()))
                failures += 1
                continue
            with open(path, "wb") as f:
                f.write(p.stdout)
            c = check_file(path, args)
            got = " | ".join(c.violations)
            if want is None and not c.violations:
                ok = True
            else:
                ok = want is not None and want in got
            if not ok:
                failures += 1
                print("self-test %s: expected %s, got %s"
                      % (title, repr(want) if want else "no violation",
                         got or "no violation"))
    n = len(SELF_TESTS)
    print("self-test: %d passed, %d failed" % (n - failures,
                                                              failures))
    return 1 if failures else 0


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Check the structure of a Perfetto .pftrace file.")
    ap.add_argument("file", nargs="?")
    ap.add_argument("--expect-slices", type=int, metavar="N")
    ap.add_argument("--expect-instants", type=int, metavar="N")
    ap.add_argument("--expect-counters", type=int, metavar="N",
                    help="number of counter values")
    ap.add_argument("--expect-flows", type=int, metavar="N",
                    help="number of flow ids with two or more events")
    ap.add_argument("--expect-tracks", type=int, metavar="N")
    ap.add_argument("--min-slices", type=int, metavar="N")
    ap.add_argument("--min-resets", type=int, metavar="N",
                    help="intern resets (CLEARED packets after the first)")
    ap.add_argument("--count-name", action="append", default=[],
                    metavar="NAME", help="print how many slices and instants "
                    "have this name (repeatable)")
    ap.add_argument("--expect-name", action="append", default=[],
                    metavar="NAME=N", help="fail unless N slices and instants "
                    "have this name (repeatable)")
    ap.add_argument("--json", action="store_true",
                    help="print totals and per-track counts as JSON")
    ap.add_argument("--max-violations", type=int, default=20, metavar="N",
                    help="violations to print (default 20)")
    ap.add_argument("--proto", default=DEFAULT_PROTO)
    ap.add_argument("--protoc", default="protoc")
    ap.add_argument("--self-test", action="store_true",
                    help="check the checker on built-in bad traces")
    args = ap.parse_args(argv)
    for spec in args.expect_name:
        if "=" not in spec or not spec.rpartition("=")[2].isdigit():
            ap.error("--expect-name wants NAME=N, got %r" % spec)
        args.count_name.append(spec.rpartition("=")[0])
    if args.self_test:
        return self_test(args)
    if not args.file:
        ap.error("a trace file is required")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
