"""docs/FORMAT.md stays true: its table of event kinds matches events.def."""
import os
import re

from conftest import ROOT


def test_format_kind_table_matches_events_def():
    src = open(os.path.join(ROOT, "libfeedtrace", "events.def")).read()
    kinds = re.findall(r'^EV\(\s*\w+,\s*"([^"]+)",\s*\w+,\s*(\d+)', src, re.M)
    doc = open(os.path.join(ROOT, "docs", "FORMAT.md")).read()
    table = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[0].isdigit():
            for k in range(0, 9, 3):
                if cells[k].isdigit():
                    table[int(cells[k])] = (cells[k + 1], cells[k + 2])
    expected = {i: (name, slots) for i, (name, slots) in enumerate(kinds, 1)}
    assert table == expected
