"""The writer's own TrackEvent encoder (converter/out/pftrace.c, encode_event):
with FEEDTRACE_PFTRACE_VERIFY=1 every event packet is packed by protobuf-c
as well and the writer aborts unless the two are byte-identical. Run over
the cmocka writer test (every arg kind, counters, flows, intern resets) and
a converted trace with many kinds, negative values, interning resets and
flows; then the benchmark generator's output converts and checks clean."""
import os
import subprocess
import sys

from conftest import BUILD, ROOT, TOOL
import ftgen

CHECK = os.path.join(ROOT, "tests", "check_pftrace.py")
MS = 1_000_000
VERIFY = dict(os.environ, FEEDTRACE_PFTRACE_VERIFY="1")


def test_writer_test_matches_protobuf_c(tmp_path):
    a, b = str(tmp_path / "a.pftrace"), str(tmp_path / "b.pftrace")
    r = subprocess.run([os.path.join(BUILD, "tests", "test_pftrace"), a, b],
                       capture_output=True, text=True, timeout=120, env=VERIFY)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "differs" not in r.stderr


def test_convert_matches_protobuf_c(tmp_path):
    d = tmp_path / "mix"
    d.mkdir()
    w = ftgen.TraceFile(str(d / "host.9.ft"), 9, ["mix", "--x"])
    w.thread(9, "main", True)
    w.thread(10, "loader")
    t = w.start + MS
    for i in range(300):
        w.event(9, "CU_LAUNCH_KERNEL", t, 10_000, sym="cuLaunchKernel", kernel="k%d" % (i % 7),
                sync=0, stream=0x10, gx=64, gy=1, gz=1, bx=256, by=1, bz=1)
        w.event(9, "CU_MEMCPY_DTOH", t + 20_000, MS, sym="cuMemcpyDtoH_v2", dir=2, sync=2,
                stream=0x10, bytes=4, pinned=0, site="train.py:%d" % (i % 3))
        w.event(9, "CU_STREAM_SYNC", t + 2 * MS, 100_000, sym="cuStreamSynchronize", sync=1,
                stream=0x10)
        w.event(10, "OPENAT", t, 5_000, fd=-1 if i % 5 == 0 else 3, path="/d/f%d" % i,
                flags=0, dirfd=-100)
        w.event(10, "READ", t + 10_000, 2_000, fd=3, path="/d/f%d" % i, req=4096,
                ret=-1 if i % 11 == 0 else 4096)
        w.event(10, "MUTEX_LOCK", t + 20_000, 300_000 if i % 4 == 0 else 50, lock=0x1000,
                ret=0)
        t += 3 * MS
    w.close()
    out = str(tmp_path / "mix.pftrace")
    r = subprocess.run([TOOL, "convert", str(d), "-o", out, "--quiet"], capture_output=True,
                       text=True, timeout=300, env=VERIFY)
    assert r.returncode == 0, r.stderr
    assert "differs" not in r.stderr
    r = subprocess.run([sys.executable, CHECK, out, "--expect-flows", "300"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_bench_generator_trace_converts(tmp_path):
    gen = str(tmp_path / "gen_events")
    r = subprocess.run(["cc", "-O1", "-D_GNU_SOURCE", "-std=gnu11", "-o", gen,
                        "-I", os.path.join(ROOT, "converter", "read"),
                        "-I", os.path.join(ROOT, "libfeedtrace", "format"),
                        os.path.join(ROOT, "tests", "bench", "gen_events.c"),
                        os.path.join(ROOT, "converter", "read", "events.c"), "-lzstd"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    d = str(tmp_path / "gen")
    subprocess.run([gen, d, "20000"], check=True, capture_output=True, timeout=60)
    out = str(tmp_path / "gen.pftrace")
    r = subprocess.run([TOOL, "convert", d, "-o", out, "--quiet"], capture_output=True,
                       text=True, timeout=300, env=VERIFY)
    assert r.returncode == 0, r.stderr
    assert "20000 events" in r.stderr
    r = subprocess.run([sys.executable, CHECK, out], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
