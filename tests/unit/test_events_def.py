"""libfeedtrace/format/events.def: every kind has its number (1, 2, 3... in line
order: the file format's kind numbers) and a class the converter knows
(converter/read/events.h's FT_KCLASSES), one that fits its hook group and its
fields, since the analyses' facts of a kind follow from its class
(converter/analyse/evfacts.c)."""
import os
import re

from conftest import ROOT
from ftgen import ftdefs

GROUPS = {
    "FILE": {"FT_G_IO"}, "OPEN": {"FT_G_IO"}, "READ": {"FT_G_IO"}, "URING": {"FT_G_IO"},
    "LOCK": {"FT_G_LOCK"}, "DATA_WAIT": {"FT_G_LOCK"}, "COND": {"FT_G_LOCK"},
    "SEM": {"FT_G_LOCK"}, "GLOO": {"FT_G_LOCK"}, "HANDOVER": {"FT_G_IO", "FT_G_LOCK"},
    "PROCESS": {"FT_G_PROC"}, "RANGE": {"FT_G_PROC"},
    "CUDA": {"FT_G_CUDA"}, "LAUNCH": {"FT_G_CUDA"}, "COLLECTIVE": {"FT_G_CUDA"},
}


def converter_classes():
    src = open(os.path.join(ROOT, "converter", "read", "events.h")).read()
    body = src[src.index("#define FT_KCLASSES(X)"):src.index("enum ft_kclass")]
    return re.findall(r"X\((\w+),", body)


def test_every_line_is_read_with_its_number():
    lines = [l for l in open(ftdefs.EVENTS_DEF) if l.startswith("EV(")]
    kinds = list(ftdefs.kinds().values())
    assert len(kinds) == len(lines)            # no line in another shape
    assert [k.number for k in kinds] == list(range(1, len(kinds) + 1))
    assert len({k.id for k in kinds}) == len(kinds)


def test_every_kind_has_a_class_the_converter_knows():
    known = converter_classes()
    assert sorted(known) == sorted(GROUPS)
    for k in ftdefs.kinds().values():
        assert k.cls in known, k.id
        assert k.group in GROUPS[k.cls], (k.id, k.cls, k.group)


def test_classes_fit_the_fields():
    """the fields each class's facts read: a read's req and ret, a lock's
    lock, a data wait's ret, a CUDA call's sync"""
    for k in ftdefs.kinds().values():
        names = {f.name for f in k.fields}
        file_read = k.group == "FT_G_IO" and {"req", "ret"} <= names
        assert (k.cls == "READ") == file_read, k.id
        assert (k.cls == "LOCK") == ("lock" in names), k.id
        if k.cls in ("DATA_WAIT", "COND", "SEM"):
            assert "ret" in names, k.id
        if k.group == "FT_G_CUDA":
            assert "sync" in names, k.id
