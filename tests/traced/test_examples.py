"""The C examples (examples/*.c) under the tracer, on the simulated GPU.

Each example and its fixed twin (--fixed) runs through each of the four ways
examples/cudrv.h reaches the driver (FT_CUDA_PATH: link, dlsym, proc,
proc-ptds), and the trace must hold EXACTLY the CUDA calls the example makes
(examples/README.md lists them): every CUDA record counted by (call, exact
driver symbol, sync class, stream), nothing else; plus the kernel names and
grids, copy directions, sizes and page-locked flags, the hidden syncs of
hidden_sync (none in its twin), data_starved's 4 KiB reads, and lock_bound's
contended launch lock.

Symbols: link, dlsym and proc (flags 0) call the default-stream variants
(cuLaunchKernel, cuMemcpyDtoH_v2, ...), on the legacy default stream (0);
proc-ptds calls the per-thread ones (cuLaunchKernel_ptsz,
cuMemcpyDtoH_v2_ptds, ...), recorded on stream 2 (the per-thread default
stream).
"""
import collections
import json
import os
import subprocess

import pytest

from conftest import BUILD, PYTHON, ROOT, make

EXAMPLES = os.path.join(BUILD, "examples")
SIMGPU = os.path.join(BUILD, "simgpu")
PATHS = ["link", "dlsym", "proc", "proc-ptds"]

# per-thread (flags 2) variant of each default-stream symbol the examples use
PTDS = {
    "cuLaunchKernel": "cuLaunchKernel_ptsz",
    "cuMemcpyHtoDAsync_v2": "cuMemcpyHtoDAsync_v2_ptsz",
    "cuMemcpyDtoH_v2": "cuMemcpyDtoH_v2_ptds",
    "cuMemcpyDtoHAsync_v2": "cuMemcpyDtoHAsync_v2_ptsz",
    "cuStreamSynchronize": "cuStreamSynchronize_ptsz",
    "cuEventRecord": "cuEventRecord_ptsz",
}

# call -> the exact export the default-stream paths call
SYM = {
    "cuDevicePrimaryCtxRetain": "cuDevicePrimaryCtxRetain",
    "cuCtxSetCurrent": "cuCtxSetCurrent",
    "cuLibraryLoadData": "cuLibraryLoadData",
    "cuMemAlloc": "cuMemAlloc_v2",
    "cuMemHostAlloc": "cuMemHostAlloc",
    "cuLaunchKernel": "cuLaunchKernel",
    "cuMemcpyHtoDAsync": "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoH": "cuMemcpyDtoH_v2",
    "cuMemcpyDtoHAsync": "cuMemcpyDtoHAsync_v2",
    "cuStreamSynchronize": "cuStreamSynchronize",
    "cuEventRecord": "cuEventRecord",
    "cuEventSynchronize": "cuEventSynchronize",
}

# (call, sync class, on the default stream?, count); "S": a stream the
# program created (lock_bound --fixed)
PLANTED = {
    ("launch_bound", False): [
        ("cuLibraryLoadData", 4, None, 1), ("cuMemAlloc", 4, None, 1),
        ("cuLaunchKernel", 0, "D", 10 * 2000), ("cuStreamSynchronize", 1, "D", 10)],
    ("launch_bound", True): [
        ("cuLibraryLoadData", 4, None, 1), ("cuMemAlloc", 4, None, 1),
        ("cuLaunchKernel", 0, "D", 10 * 20), ("cuStreamSynchronize", 1, "D", 10)],
    ("hidden_sync", False): [
        ("cuLibraryLoadData", 4, None, 1), ("cuMemAlloc", 4, None, 2),
        ("cuMemcpyHtoDAsync", 2, "D", 20), ("cuLaunchKernel", 0, "D", 60),
        ("cuMemcpyDtoH", 2, "D", 20), ("cuStreamSynchronize", 1, "D", 1)],
    ("hidden_sync", True): [
        ("cuLibraryLoadData", 4, None, 1), ("cuMemAlloc", 4, None, 2),
        ("cuMemHostAlloc", 4, None, 3),
        ("cuMemcpyHtoDAsync", 0, "D", 20), ("cuEventRecord", 4, "D", 22),
        ("cuEventSynchronize", 1, None, 20), ("cuLaunchKernel", 0, "D", 60),
        ("cuMemcpyDtoHAsync", 0, "D", 2), ("cuStreamSynchronize", 1, "D", 1)],
    ("data_starved", False): [
        ("cuLibraryLoadData", 4, None, 1), ("cuMemAlloc", 4, None, 1),
        ("cuMemHostAlloc", 4, None, 1),
        ("cuMemcpyHtoDAsync", 0, "D", 12), ("cuEventRecord", 4, "D", 12),
        ("cuEventSynchronize", 1, None, 11), ("cuLaunchKernel", 0, "D", 12),
        ("cuStreamSynchronize", 1, "D", 1)],
    ("data_starved", True): [
        ("cuLibraryLoadData", 4, None, 1), ("cuMemAlloc", 4, None, 1),
        ("cuMemHostAlloc", 4, None, 3),
        ("cuMemcpyHtoDAsync", 0, "D", 12), ("cuEventRecord", 4, "D", 12),
        ("cuEventSynchronize", 1, None, 9), ("cuLaunchKernel", 0, "D", 12),
        ("cuStreamSynchronize", 1, "D", 1)],
    ("lock_bound", False): [
        ("cuLibraryLoadData", 4, None, 1), ("cuMemAlloc", 4, None, 1),
        ("cuLaunchKernel", 0, "D", 100), ("cuStreamSynchronize", 1, "D", 100)],
    ("lock_bound", True): [
        ("cuLibraryLoadData", 4, None, 1), ("cuMemAlloc", 4, None, 1),
        ("cuLaunchKernel", 0, "S", 100), ("cuStreamSynchronize", 1, "S", 100)],
}

# every example: the primary context retained once and made current on each
# thread that uses it (the main thread; data_starved's loader; lock_bound's
# 4 workers)
CONTEXT_THREADS = {"launch_bound": 1, "hidden_sync": 1, "data_starved": 2, "lock_bound": 5}
for (_name, _fixed), _rows in PLANTED.items():
    _rows[:0] = [("cuDevicePrimaryCtxRetain", 4, None, 1),
                 ("cuCtxSetCurrent", 4, None, CONTEXT_THREADS[_name])]

KERNELS = {   # (example, fixed) -> {kernel: (launches, grid x, block x)}
    ("launch_bound", False): {"tiny_elementwise": (20000, 4, 128)},
    ("launch_bound", True): {"fused_elementwise": (200, 400, 128)},
    ("hidden_sync", False): {"forward": (20, 256, 256), "backward": (20, 256, 256),
                             "optimizer_step": (20, 64, 256)},
    ("data_starved", False): {"train_step": (12, 1024, 256)},
    ("lock_bound", False): {"infer": (100, 32, 256)},
}
KERNELS[("hidden_sync", True)] = KERNELS[("hidden_sync", False)]
KERNELS[("data_starved", True)] = KERNELS[("data_starved", False)]
KERNELS[("lock_bound", True)] = KERNELS[("lock_bound", False)]


@pytest.fixture(scope="module", autouse=True)
def built():
    make("examples")


def sym(call, path):
    s = SYM[call]
    return PTDS.get(s, s) if path == "proc-ptds" else s


def expected(name, fixed, path):
    dflt = "0x2" if path == "proc-ptds" else "0x0"
    out = collections.Counter()
    for call, sync, stream, n in PLANTED[(name, fixed)]:
        st = "0x0" if stream is None else dflt if stream == "D" else "S"
        out[(call, sym(call, path), sync, st)] += n
    return out


def cuda_events(trace):
    return [e for e in trace.events if e["call"].startswith("cu")]


def tally(events):
    c = collections.Counter()
    for e in events:
        a = e["args"]
        st = a["stream"] if a["stream"] in ("0x0", "0x2") else "S"
        c[(e["call"], a["sym"], a["sync"], st)] += 1
    return c


def run_example(traced, name, path, fixed, args=()):
    argv = [os.path.join(EXAMPLES, name)] + (["--fixed"] if fixed else []) + list(args)
    run = traced(argv, env={"FT_CUDA_PATH": path, "LD_LIBRARY_PATH": SIMGPU}, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[%s]" % path in run.stdout
    assert not run.trace.dump_stderr.strip() or "lost" not in run.trace.dump_stderr
    for p in run.trace.procs:
        assert p.get("lost", 0) == 0, p
    return run


def check_common(run, name, fixed, path):
    ev = cuda_events(run.trace)
    assert tally(ev) == expected(name, fixed, path)
    assert all(e["args"]["ret"] == 0 for e in ev)
    launches = [e for e in ev if e["call"] == "cuLaunchKernel"]
    kern = collections.Counter(e["args"]["kernel"] for e in launches)
    want = KERNELS[(name, fixed)]
    assert kern == {k: v[0] for k, v in want.items()}
    for e in launches:
        a = e["args"]
        _, gx, bx = want[a["kernel"]]
        assert (a["gx"], a["gy"], a["gz"], a["bx"], a["by"], a["bz"]) == (gx, 1, 1, bx, 1, 1)
    return ev


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("fixed", [False, True], ids=["broken", "fixed"])
def test_launch_bound(traced, path, fixed):
    run = run_example(traced, "launch_bound", path, fixed)
    check_common(run, "launch_bound", fixed, path)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("fixed", [False, True], ids=["broken", "fixed"])
def test_hidden_sync(traced, path, fixed):
    run = run_example(traced, "hidden_sync", path, fixed)
    ev = check_common(run, "hidden_sync", fixed, path)
    copies = [e for e in ev if e["call"].startswith("cuMemcpy")]
    htod = [e["args"] for e in copies if e["args"]["dir"] == 1]
    dtoh = [e["args"] for e in copies if e["args"]["dir"] == 2]
    assert len(htod) == 20 and all(a["bytes"] == 256 * 1024 for a in htod)
    hidden = [e for e in ev if e["args"]["sync"] == 2]
    if not fixed:
        # exactly one .item()-style DtoH and one pageable HtoDAsync per step
        assert len(dtoh) == 20
        assert all(a["sym"] == sym("cuMemcpyDtoH", path) and a["sync"] == 2 and
                   a["bytes"] == 4 and a["pinned"] == 0 for a in dtoh)
        assert all(a["sym"] == sym("cuMemcpyHtoDAsync", path) and a["sync"] == 2 and
                   a["pinned"] == 0 for a in htod)
        assert len(hidden) == 40
    else:
        assert hidden == []
        assert all(a["pinned"] == 1 and a["sync"] == 0 for a in htod)
        assert len(dtoh) == 2
        assert all(a["sym"] == sym("cuMemcpyDtoHAsync", path) and a["sync"] == 0 and
                   a["bytes"] == 4 and a["pinned"] == 1 for a in dtoh)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("fixed", [False, True], ids=["broken", "fixed"])
def test_data_starved(traced, tmp_path, path, fixed):
    data = tmp_path / "dataset"
    data.mkdir()
    run = run_example(traced, "data_starved", path, fixed, ["--dir", str(data)])
    ev = check_common(run, "data_starved", fixed, path)
    assert list(data.iterdir()) == []             # the example cleans up
    prefix = str(data) + "/"
    reads = [e for e in run.trace.calls("read")
             if (e["args"].get("path") or "").startswith(prefix)]
    sizes = collections.Counter((e["args"]["req"], e["args"]["ret"]) for e in reads)
    if not fixed:
        # 192 files x (8 reads of 4 KiB + 1 read at end of file)
        assert sizes == {(4096, 4096): 192 * 8, (4096, 0): 192}
    else:
        assert sizes == {(32768, 32768): 192}
    assert len({e["args"]["path"] for e in reads}) == 192
    # the loader thread reads, the main thread launches
    main_tid = run.trace.procs[0]["pid"]
    loader = {e["tid"] for e in reads}
    assert len(loader) == 1 and main_tid not in loader
    assert {e["tid"] for e in ev if e["call"] == "cuLaunchKernel"} == {main_tid}
    assert {e["tid"] for e in ev if e["call"] == "cuEventSynchronize"} == loader
    copies = [e["args"] for e in ev if e["call"] == "cuMemcpyHtoDAsync"]
    assert all(a["pinned"] == 1 and a["bytes"] == 16 * 32 * 1024 for a in copies)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("fixed", [False, True], ids=["broken", "fixed"])
def test_lock_bound(traced, path, fixed):
    run = run_example(traced, "lock_bound", path, fixed)
    ev = check_common(run, "lock_bound", fixed, path)
    lock = [ln.split()[2] for ln in run.stdout.splitlines() if ln.startswith("launch lock ")]
    assert len(lock) == 1
    contended = run.trace.calls("pthread_mutex_lock", lock=lock[0])
    launches = [e for e in ev if e["call"] == "cuLaunchKernel"]
    # A lock the driver takes inside a call feedtrace wraps belongs to that
    # call and is not recorded. cuStreamCreate is not wrapped: with --fixed
    # the four workers create their streams together at start, and may
    # wait on the simulated driver's own lock (seen under ASan): at most
    # once each, all on that one lock, all before the first launch.
    others = [e for e in run.trace.calls("pthread_mutex_lock") if e not in contended]
    if fixed:
        assert len({e["tid"] for e in others}) == len(others) <= 4
        assert len({e["args"]["lock"] for e in others}) <= 1
        first_launch = min(e["ts_ns"] for e in launches)
        assert all(e["ts_ns"] + e["dur_ns"] <= first_launch for e in others)
    else:
        assert others == []
    by_tid = collections.Counter(e["tid"] for e in launches)
    assert sorted(by_tid.values()) == [25] * 4
    if not fixed:
        # how many of the 100 acquisitions find the lock taken depends on
        # scheduling: at least one, at most 99 (the first one is free)
        assert 1 <= len(contended) <= 99
        assert all(e["args"]["ret"] == 0 for e in contended)
        assert {e["tid"] for e in contended} <= set(by_tid)
    else:
        assert contended == []
        streams = collections.Counter(e["args"]["stream"] for e in launches)
        assert len(streams) == 4 and sorted(streams.values()) == [25] * 4
        syncs = collections.Counter(e["args"]["stream"] for e in ev
                                    if e["call"] == "cuStreamSynchronize")
        assert syncs == streams


@pytest.mark.parametrize("fixed", [False, True], ids=["broken", "fixed"])
def test_train_py(traced, tmp_path, fixed):
    """examples/train.py (real PyTorch, CPU here), 4 steps: the DataLoader's
    worker processes read the data set exactly as documented."""
    data = tmp_path / "train-data"
    data.mkdir()
    argv = [PYTHON, os.path.join(ROOT, "examples", "train.py"), "--steps", "4",
            "--workers", "2", "--cpu", "--data", str(data)] + (["--fixed"] if fixed else [])
    run = traced(argv, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "4 steps of 32" in run.stdout
    prefix = str(data) + "/"
    reads = [e for e in run.trace.calls("read")
             if (e["args"].get("path") or "").startswith(prefix)]
    sizes = collections.Counter((e["args"]["req"], e["args"]["ret"]) for e in reads)
    if not fixed:
        # 128 files of 12,300 bytes, 4 KiB at a time: 4096 x3, 12, end of file
        assert sizes == {(4096, 4096): 128 * 3, (4096, 12): 128, (4096, 0): 128}
        assert len({e["args"]["path"] for e in reads}) == 128
    else:
        assert sizes == {(393600, 393600): 4}
    # the loader's worker processes read, not the training process
    pids = {p["pid"] for p in run.trace.procs}
    main = [p["pid"] for p in run.trace.procs if p["ppid"] not in pids]
    assert len(main) == 1 and len(pids) == 3
    assert {e["pid"] for e in reads} == pids - set(main)
    assert all(p["lost"] == 0 for p in run.trace.procs)
    # each step is a range "step N" of the training process (feedtrace_range_push)
    # (besides the DataLoader's __next__ ranges of the Python-side
    # instrumentation, inside them or after the last one)
    pushes = run.trace.calls("nvtxRangePush")
    own = [e for e in pushes if not e["args"]["name"].startswith("feedtrace:")]
    assert [(e["pid"], e["args"]["name"], e["args"]["level"], e["args"]["api"])
            for e in own] == [(main[0], "step %d" % i, 0, 2) for i in range(4)]
    nexts = [e for e in pushes if e["args"]["name"].startswith("feedtrace:next loader=1 ")]
    assert len(nexts) + len(own) == len(pushes) and len(nexts) >= 4
    assert sorted(e["args"]["level"] for e in run.trace.calls("nvtxRangePop")) == \
        sorted(e["args"]["level"] for e in pushes)
    r = subprocess.run([os.path.join(BUILD, "feedtrace"), "report", "--json", run.dir],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["metrics"]["steps"] == 4


def test_cudrv_requests_are_libcudart13s():
    """examples/cudrv.h asks cuGetProcAddress for each function at exactly a
    (name, version, flags) that libcudart 13 asks for (the TSV)."""
    import re
    tsv = set()
    with open(os.path.join(ROOT, "tests", "data", "cudart13-getprocaddress.tsv")) as f:
        for line in f:
            if not line.startswith("#") and line.strip():
                s, v, fl = line.rstrip("\n").split("\t")
                tsv.add((s, int(v), int(fl)))
    with open(os.path.join(ROOT, "examples", "cudrv.h")) as f:
        rows = re.findall(r'^\tX\((\w+),\s+\w+,\s+"(\w+)",\s+(\w+),\s+(\d+),\s+(\d),\s+(\d+)\)',
                          f.read(), re.M)
    assert len(rows) == 18
    for field, api, export, ver, ptds, vptds in rows:
        assert (api, int(ver), 0) in tsv, (api, ver)
        if ptds == "1":
            assert (api, int(vptds), 2) in tsv, (api, vptds)
        assert export.startswith(api)
    assert (("cuGetProcAddress", 12000, 0)) in tsv
