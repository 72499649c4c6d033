"""converter/analyse/fkind.c's table of finding kinds (fkind.h, fkinds.def): every
kind has its names and every op a consumer calls unguarded, the keys are
unique, and the members each kind writes into a report JSON finding are
the ones docs/REPORT-SCHEMA.md lists for that kind, by the table itself
(tests/unit/fkind_table.c, linked with the built converter objects)."""
import json
import os
import re
import subprocess

import pytest

from conftest import BUILD, ROOT, make

# what every consumer calls without looking (report_text.c, convert.c, problems.c)
REQUIRED_OPS = ("suggestion", "label", "json", "args")


@pytest.fixture(scope="module")
def table():
    exe = os.path.join(BUILD, "tests", "unit", "fkind_table")
    make(exe)          # built by the Makefile, with the build's own flags
    out = subprocess.run([exe], capture_output=True, check=True, timeout=60).stdout

    def no_dup(pairs):
        keys = [k for k, _ in pairs]
        assert len(keys) == len(set(keys)), "a member written twice: %s" % keys
        return dict(pairs)
    return json.loads(out, object_pairs_hook=no_dup)


def schema_kinds():
    """REPORT-SCHEMA.md's FINDING block: its common fields, and per kind
    key the backquoted names of its bullet"""
    text = open(os.path.join(ROOT, "docs", "REPORT-SCHEMA.md")).read()
    block = text[text.index("**FINDING**"):text.index("**PROBLEM**")]
    common = set(re.findall(r"`([^`]+)`", block[:block.index("then by kind")]))
    kinds, cur = {}, None
    for line in block.splitlines():
        m = re.match(r"- `(\w+)`:(.*)", line)
        if m:
            cur = m.group(1)
            kinds[cur] = m.group(2)
        elif cur and line.startswith("  "):
            kinds[cur] += " " + line
        else:
            cur = None
    return common, {k: set(re.findall(r"`([^`]+)`", v)) for k, v in kinds.items()}


def test_every_kind_has_its_names_and_ops(table):
    assert [k["index"] for k in table] == list(range(len(table)))
    assert len(table) >= 4
    for k in table:
        for name in ("key", "slice", "track", "row"):
            assert k[name], (k["key"], name)
        for op in REQUIRED_OPS:
            assert k["ops"][op], (k["key"], op)
        # diff matches it by itself or by its Problems row, one of the two
        assert k["ops"]["identity"] != k["ops"]["row_identity"], k["key"]
        assert k["label"] and k["suggestion"], k["key"]
        assert k["args"] and len(k["args"]) == len(set(k["args"])), k["key"]
        assert "suggestion" not in k["args"], k["key"]  # convert.c adds it


def test_keys_and_names_are_unique(table):
    for name in ("key", "slice", "track"):
        values = [k[name] for k in table]
        assert len(values) == len(set(values)), (name, values)
    assert all(re.fullmatch(r"[a-z_]+", k["key"]) for k in table)


def test_json_members_are_the_schema_documents(table):
    common, kinds = schema_kinds()
    assert {"kind", "pid", "start_ns", "end_ns", "lost_ns", "suggestion"} <= common
    assert sorted(kinds) == sorted(k["key"] for k in table)
    for k in table:
        members = set(k["json"])
        assert members, k["key"]
        assert not members & common, (k["key"], members & common)
        assert members <= kinds[k["key"]], (k["key"], members - kinds[k["key"]])
