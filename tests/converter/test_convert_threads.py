"""`feedtrace convert --threads 1` and `--threads 2` (the pipeline of
converter/out/pipeline.c) write byte-identical files, with the same messages and
exit status: on synthetic traces (tests/ftgen.py: CUDA steps with hidden
syncs, flows and findings, several threads and processes, user ranges; long
enough to fill many of the pipeline's batches) and on damaged ones; on
traces of real programs in tests/traced/test_convert_threads_programs.py."""
import os
import subprocess

from conftest import TOOL
from test_convert import cuda_steps, good_file, two_syncing_threads
from test_ranges_synthetic import planted_steps


def convert_both(d, ok=True):
    """Converts d with 1 and with 2 threads; asserts the same bytes, messages, status."""
    runs = []
    for n in ("1", "2"):
        out = "%s.t%s.pftrace" % (d.rstrip("/"), n)
        r = subprocess.run([TOOL, "convert", d, "-o", out, "--quiet", "--threads", n],
                           capture_output=True, text=True, timeout=300)
        data = open(out, "rb").read() if os.path.exists(out) else None
        runs.append((r.returncode, r.stderr.replace(out, "OUT"), data))
    (rc1, err1, data1), (rc2, err2, data2) = runs
    assert rc1 == rc2 and err1 == err2
    if ok:
        assert rc1 == 0, err1
        assert data1 and len(data1) > 100
    assert data1 == data2, "outputs differ (%s vs %s bytes)" % (
        len(data1 or b""), len(data2 or b""))
    return rc1, err1


def test_synthetic_cuda_many_batches(tmp_path):
    d = tmp_path / "cuda"
    d.mkdir()
    # 400 steps of 16 calls: far more than the pipeline's queue holds
    cuda_steps(str(d / "host.100.ft"), steps=400).close()
    cuda_steps(str(d / "host.101.ft"), steps=50, pid=101, hidden=False).close()
    _, err = convert_both(str(d))
    assert "400 flows" in err


def test_synthetic_threads_ranges_lost(tmp_path):
    d = tmp_path / "mt"
    d.mkdir()
    two_syncing_threads(str(d / "host.7.ft"), 200).close(lost={8: 99})
    planted_steps(str(d / "host.300.ft"))
    _, err = convert_both(str(d))
    assert "dropped 99 events" in err


def test_damaged(tmp_path):
    d = tmp_path / "bad"
    d.mkdir()
    w = good_file(str(d / "host.9.ft"))
    chunks = w.chunks()
    w.close(chunks=chunks)
    data = bytearray(open(str(d / "host.9.ft"), "rb").read())
    off = 256
    for i, (ctype, payload) in enumerate(chunks):
        if ctype == 1 and i > 4:
            data[off + 24 + 40] ^= 0xFF            # one bad events chunk
            break
        off += 24 + len(payload)
    open(str(d / "host.9.ft"), "wb").write(bytes(data[:len(data) - 30]))
    (d / "junk.ft").write_bytes(os.urandom(4096))
    _, err = convert_both(str(d))
    assert "checksum" in err and "junk.ft: offset 0: not a feedtrace file" in err


def test_nothing_usable(tmp_path):
    d = tmp_path / "empty"
    d.mkdir()
    rc, err = convert_both(str(d), ok=False)
    assert rc == 1 and "no trace files" in err


def test_bad_threads_option(tmp_path):
    for bad in ("0", "3", "x"):
        r = subprocess.run([TOOL, "convert", str(tmp_path), "--threads", bad],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and "--threads" in r.stderr
