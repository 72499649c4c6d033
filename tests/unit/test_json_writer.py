"""converter/base/json.c, the one JSON writer of report, diff, dump and ranks:
the commas between values at each level, keys, the numbers' formats, null,
and the string escapes (control characters as \\u00XX, a byte that is not
valid UTF-8 as \\udcXX, Python's surrogateescape), by the exact text a
small C program (tests/unit/json_writer.c) gets from it."""
import json
import os
import subprocess

from conftest import ROOT

EXPECTED = (
    '{"s":"a\\"b\\\\c\\u000a\\u001f\\u007f",'
    '"utf8":"\u00e9\u20ac\U0001f600",'
    '"bad":"\\udcff\\udcc0\\udcaf\\udced\\udca0\\udc80\\udce2\\udc82",'
    '"k\\"ey":null,'
    '"empty":[],"none":{},'
    '"nums":[18446744073709551615,-9223372036854775808,2,-0.1235,1.23457e+06,0.000125,'
    '"0x1f",{"t":true,"f":false,"n":null}]}\n'
    '"alone"\n'
)


def test_the_writer_writes_exactly_this(tmp_path):
    exe = str(tmp_path / "json_writer")
    conv = os.path.join(ROOT, "converter", "base")
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-I", conv, "-o", exe,
                    os.path.join(ROOT, "tests", "unit", "json_writer.c"),
                    os.path.join(conv, "json.c")], check=True, timeout=120)
    out = subprocess.run([exe], capture_output=True, timeout=60).stdout.decode("utf-8")
    assert out == EXPECTED
    doc = json.loads(out.splitlines()[0])
    assert os.fsencode(doc["bad"]) == b"\xff\xc0\xaf\xed\xa0\x80\xe2\x82"
    assert doc["utf8"] == "\u00e9\u20ac\U0001f600"
    assert doc["nums"][6] == "0x1f"
