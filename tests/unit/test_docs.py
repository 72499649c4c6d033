"""The documents stay true to the one list of each fact: docs/FORMAT.md's
table of event kinds matches events.def; docs/ARCHITECTURE.md's table of
FEEDTRACE_* variables, and the README's list, match config.def."""
import os
import re

from conftest import ROOT
from ftgen import ftdefs


def test_format_kind_table_matches_events_def():
    doc = open(os.path.join(ROOT, "docs", "FORMAT.md")).read()
    table = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0].isdigit():
            for k in range(0, 9, 3):
                if cells[k].isdigit():
                    table[int(cells[k])] = (cells[k + 1], cells[k + 2])
    expected = {k.number: (k.name, str(k.nslots)) for k in ftdefs.kinds().values()}
    assert table == expected


def config_def():
    """[(NAME, kind, default, lo, hi)] from libfeedtrace/config.def"""
    out = []
    for line in open(os.path.join(ROOT, "libfeedtrace", "config.def")):
        m = re.match(r"CFG_(U32|FLAG|TEXT)\((\w+),\s*(.*)\)\s*$", line)
        if m:
            args = [a.strip() for a in m.group(3).split(",")]
            if m.group(1) == "U32":
                out.append((m.group(2), "U32", args[1], args[2], args[3]))
            else:
                out.append((m.group(2), m.group(1), None, None, None))
    return out


def test_config_table_matches_config_def():
    doc = open(os.path.join(ROOT, "docs", "ARCHITECTURE.md")).read()
    rows = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].startswith("FEEDTRACE_"):
            rows[cells[0][len("FEEDTRACE_"):]] = cells[1:]
    defs = config_def()
    assert len(defs) == 21     # CAPTURE; FLIGHT, FLIGHT_HANG_S, FLIGHT_EXIT: the flight recorder
    assert sorted(rows) == sorted(name for name, *_ in defs)
    for name, kind, dflt, lo, hi in defs:
        default, meaning = rows[name]
        if kind == "U32":
            # the default, and the range as "lo–hi" or "lo or hi"
            assert default == dflt, name
            assert ("%s–%s" % (lo, hi)) in meaning or ("%s or %s" % (lo, hi)) in meaning, name
        elif kind == "FLAG":
            assert default == "0" and "`1`" in meaning, name


def test_readme_names_every_variable():
    readme = open(os.path.join(ROOT, "README.md")).read()
    missing = [n for n, *_ in config_def() if "`FEEDTRACE_%s`" % n not in readme]
    assert missing == []


def test_metrics_keys_documented_in_order():
    """REPORT-SCHEMA's METRICS paragraph names metrics.def's keys in its order"""
    keys = re.findall(r'^METRIC\(\s*\w+,\s*"(\w+)"',
                      open(os.path.join(ROOT, "converter", "analyse", "metrics.def")).read(), re.M)
    assert len(keys) == 24
    doc = open(os.path.join(ROOT, "docs", "REPORT-SCHEMA.md")).read()
    para = doc[doc.index("**METRICS**"):doc.index("then the steps")]
    named = [k for k in re.findall(r"`(\w+)`", para) if k in keys]
    assert sorted(set(named), key=named.index) == keys      # each in order, first mention


def test_verdict_keys_documented():
    """REPORT-SCHEMA's VERDICT and RUN tables have a row for each of
    verdict.def's keys, the process's (P) in VERDICT, the run's (R) in
    RUN or marked "(the run's verdict only)" in VERDICT"""
    rows = re.findall(r'^VERDICT\(\s*\w+,\s*([PR]),\s*\w+,\s*"(\w+)"',
                      open(os.path.join(ROOT, "converter", "analyse", "verdict.def")).read(), re.M)
    assert len(rows) >= 23
    doc = open(os.path.join(ROOT, "docs", "REPORT-SCHEMA.md")).read()
    verdict = doc[doc.index("**VERDICT**"):doc.index("**RUN**")]
    run = doc[doc.index("**RUN**"):doc.index("**FINDING**")]
    for scope, key in rows:
        line = re.search(r"^\| %s \|.*$" % key, verdict + run, re.M)
        assert line, key
        in_run = line.group(0) in run or "(the run's verdict only)" in line.group(0)
        assert in_run == (scope == "R"), key
