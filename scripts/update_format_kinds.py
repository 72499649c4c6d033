#!/usr/bin/env python3
"""update_format_kinds.py: rewrites the table of event kinds in
docs/FORMAT.md from libfeedtrace/format/events.def (tests/unit/test_docs.py checks
that the two agree). Run it after adding a kind."""
import os

import ftdefs

ROOT = ftdefs.ROOT
START = "`tests/unit/test_docs.py`\nchecks this table against `events.def`):\n\n"
END = "\n\nNew kinds are appended"


def main():
    rows = [(str(k.number), k.name, str(k.nslots)) for k in ftdefs.kinds().values()]
    per_col = (len(rows) + 2) // 3
    lines = ["| # | name | slots | # | name | slots | # | name | slots |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in range(per_col):
        cells = []
        for c in range(3):
            k = r + c * per_col
            cells += list(rows[k]) if k < len(rows) else ["", "", ""]
        lines.append("| " + " | ".join(cells) + " |")
    path = os.path.join(ROOT, "docs", "FORMAT.md")
    doc = open(path).read()
    a = doc.index(START) + len(START)
    b = doc.index(END)
    open(path, "w").write(doc[:a] + "\n".join(lines) + doc[b:])


if __name__ == "__main__":
    main()
