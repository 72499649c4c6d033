"""The reader/converter fuzzer (tests/fuzz/fuzz_reader.c, scripts/fuzz.sh),
a short run in every `make test`: it replays the seeds (real traces of
tests/progs programs, their raw re-encodings, synthetic CUDA traces) and
tests/fuzz/regress/ (inputs that once crashed the reader), then mutates for
FT_FUZZ_SECONDS (25) under ASan and UBSan. Any crash, leak, timeout (5 s),
allocation over 256 MB or RSS over 2 GB fails it. `make stress-fuzz` runs it
for an hour; figures in docs/RELIABILITY.md.
"""
import os
import re
import subprocess
import shutil

import pytest

from conftest import ROOT, SANITIZER

SECONDS = int(os.environ.get("FT_FUZZ_SECONDS", "25"))


def have_libfuzzer():
    if not shutil.which("clang"):
        return False
    r = subprocess.run(["clang", "-print-file-name=libclang_rt.fuzzer-x86_64.a"],
                       capture_output=True, text=True)
    return r.returncode == 0 and os.path.isabs(r.stdout.strip()) and \
        os.path.exists(r.stdout.strip())


pytestmark = [
    pytest.mark.skipif(not have_libfuzzer(),
                       reason="clang's libFuzzer missing (Debian: clang, libclang-rt-14-dev)"),
    pytest.mark.skipif(SANITIZER != "", reason="the fuzzer is its own ASan+UBSan build"),
]


def fuzz(*args, timeout):
    return subprocess.run([os.path.join(ROOT, "scripts", "fuzz.sh")] + list(args), cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_fuzz_reader_short():
    b = fuzz("build", timeout=300)
    assert b.returncode == 0, b.stderr[-3000:]
    r = fuzz("run", str(SECONDS), "0", timeout=SECONDS + 240)
    tail = r.stderr[-4000:]
    assert r.returncode == 0, tail
    assert "ERROR:" not in r.stderr and "runtime error" not in r.stderr, tail
    m = re.search(r"Done (\d+) runs in (\d+) second", r.stderr)
    assert m, tail
    runs = int(m.group(1))
    # the seeds, the regression inputs, and mutations of them all ran
    nseeds = len(os.listdir(os.path.join(ROOT, "build", "fuzz", "seeds"))) - 1
    nregress = len(os.listdir(os.path.join(ROOT, "tests", "fuzz", "regress")))
    assert runs > nseeds + nregress, tail
