"""ftdefs.py: the one Python reader of libfeedtrace/format/events.def, the table
of event kinds (libfeedtrace/format/layout.h is its C reader). Used by the CUDA
wrapper generator (the kind of each driver call), the documentation's
kind table (update_format_kinds.py, tests/unit/test_docs.py) and the synthetic
trace writer of the tests (tests/ftgen.py)."""
import collections
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVENTS_DEF = os.path.join(ROOT, "libfeedtrace", "format", "events.def")

# a field's bytes by type, as layout.h lays them out: 8-byte fields on an
# 8-byte boundary, after the 16-byte record head
SIZES = {"i32": 4, "u32": 4, "x32": 4, "str": 4, "u64": 8, "i64": 8, "ptr": 8}
HEAD = 16

Kind = collections.namedtuple("Kind", "id number name group cls nslots fields")
Field = collections.namedtuple("Field", "name type offset")

_EV = re.compile(r'\s*EV\(\s*(\w+)\s*,\s*(\d+)\s*,\s*"([^"]*)"\s*,\s*(\w+)\s*,\s*(\w+)\s*,'
                 r'\s*(\d+)\s*,\s*"([^"]*)"\s*\)')


def layout(spec):
    """'fd:i32 ret:i64' -> [Field], offsets from the record's start"""
    fields, off = [], HEAD
    for item in spec.split():
        name, typ = item.split(":")
        if SIZES[typ] == 8:
            off = (off + 7) & ~7
        fields.append(Field(name, typ, off))
        off += SIZES[typ]
    return fields


def kinds(path=EVENTS_DEF):
    """{ID: Kind} in events.def order, each with its own number"""
    out = {}
    for line in open(path):
        m = _EV.match(line)
        if m:
            kid, number, name, group, cls, nslots, spec = m.groups()
            out[kid] = Kind(kid, int(number), name, group, cls, int(nslots), layout(spec))
    return out
