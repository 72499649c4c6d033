"""CUDA driver hooks against the simulated driver (build/simgpu/libcuda.so.1).

tests/progs/cuda_replay.c reaches the driver as libcudart 13 does (dlopen +
dlsym of cuGetProcAddress_v2, never linked with libcuda) and is run traced and
untraced; the two outputs are compared:

- replay: all 440 requests of tests/data/cudart13-getprocaddress.tsv, in three
  passes (through the dlsym'd cuGetProcAddress_v2, then through the
  cuGetProcAddress_v2 and cuGetProcAddress that the driver itself handed out
  for ("cuGetProcAddress", 12000) and ("cuGetProcAddress", 11030)). Same
  result and status for every request; a failing look-up fails the same way;
  the pointer of every symbol feedtrace does not wrap is the driver's own
  (same library, symbol and offset); the pointer of every symbol it wraps is
  feedtrace's wrapper of exactly that driver symbol (cuMemcpyDtoH at 7000
  with flags 2 -> libfeedtrace.so:cuMemcpyDtoH_v2_ptds). A fourth pass (P4)
  asks beyond the TSV: unknown names, too-old versions, flags 2 where no
  per-thread variant exists, an invalid flag, a NULL pfn.
- calls: functions resolved that way are called; each wrapped call leaves
  exactly one record naming the exact driver symbol it called, with its
  stream (2 = per-thread default stream), result (a failing call's error is
  recorded and returned unchanged) and copy direction/size; data moved
  through every ABI variant (v1 32-bit, v2, v2_ptds) proves the wrapper
  called the right function.
- dlsym: non-CUDA names (and unwrapped CUDA names) in every kind of handle
  resolve exactly as libc's own dlsym resolves them.
- RTLD_NEXT: another preloaded library whose read() wrapper finds the next
  read with dlsym(RTLD_NEXT) keeps working beside feedtrace, in both orders.
"""
import os

import pytest

from conftest import clean_env, BUILD, LIB, ROOT, make, prog, skip_under, untraced

SIMGPU = os.path.join(BUILD, "simgpu")
TSV = os.path.join(ROOT, "tests", "data", "cudart13-getprocaddress.tsv")
CUDA_TSV = os.path.join(ROOT, "shim", "cuda.tsv")
REPLAY = prog("cuda_replay")


@pytest.fixture(scope="module", autouse=True)
def built():
    make(REPLAY, "simgpu")
    assert os.path.exists(os.path.join(SIMGPU, "libcuda.so.1"))


def sim_env(extra=None):
    e = {"LD_LIBRARY_PATH": SIMGPU + (":" + os.environ["LD_LIBRARY_PATH"]
                                      if os.environ.get("LD_LIBRARY_PATH") else "")}
    if extra:
        e.update(extra)
    return e


def run_plain(argv, env=None):
    e = clean_env("LD_PRELOAD")
    e.update(sim_env(env))
    r = untraced(argv, env=e)
    assert r.returncode == 0, r.stderr
    return r


def wrapped_symbols():
    syms = set()
    with open(CUDA_TSV) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            syms.add(line.split("\t")[0])
    return syms


def tsv_requests():
    out = []
    with open(TSV) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            s, v, fl = line.rstrip("\n").split("\t")
            out.append((s, int(v), int(fl)))
    return out


def parse_replay(text):
    rows = []
    for line in text.splitlines():
        p, sym, ver, fl, ret, status, fn = line.split("\t")
        rows.append(dict(pass_=p, sym=sym, ver=int(ver), flags=int(fl), ret=int(ret),
                         status=int(status), fn=fn))
    return rows


def split_fn(fn):
    """'libcuda.so.1:cuMemcpyDtoH_v2+0x0' -> ('libcuda.so.1', 'cuMemcpyDtoH_v2', '0x0')"""
    lib, rest = fn.split(":", 1)
    name, off = rest.rsplit("+", 1)
    return lib, name, off


# P4 of `cuda_replay replay`, traced: (symbol, version, flags, result, status,
# pointer). 500 CUDA_ERROR_NOT_FOUND (status 1 symbol not found, 2 version
# not sufficient), 1 CUDA_ERROR_INVALID_VALUE (status and pointer untouched).
EXTRA = [
    ("cuNoSuchFunction", 13000, 0, 500, 1, "NULL"),
    ("cuLaunchKernelEx", 11000, 0, 500, 2, "NULL"),
    ("cuLaunchKernelEx", 11000, 2, 500, 2, "NULL"),
    ("cuMemcpyDtoH", 1000, 0, 500, 2, "NULL"),
    ("cuMemcpyDtoH", 2000, 0, 0, 0, "libfeedtrace.so:cuMemcpyDtoH+0x0"),
    ("cuMemcpyDtoH", 3020, 2, 0, 0, "libfeedtrace.so:cuMemcpyDtoH_v2+0x0"),
    ("cuMemcpyDtoH", 99999, 2, 0, 0, "libfeedtrace.so:cuMemcpyDtoH_v2_ptds+0x0"),
    ("cuInit", 2000, 2, 0, 0, "libcuda.so.1:cuInit+0x0"),
    ("cuLaunchKernel", 4000, 4, 1, -7, "UNTOUCHED"),
    ("cuGetProcAddress", 11000, 0, 500, 2, "NULL"),
    ("cuInit(NULL pfn)", 2000, 0, 1, -7, "NULL"),
]


def test_replay_tsv_traced_vs_untraced(traced):
    reqs = tsv_requests()
    assert len(reqs) == 440
    plain = parse_replay(run_plain([REPLAY, "replay", TSV]).stdout)
    run = traced([REPLAY, "replay", TSV], env=sim_env())
    assert run.returncode == 0, run.stderr
    tr = parse_replay(run.stdout)
    assert len(plain) == len(tr) == 3 * 440 + len(EXTRA)
    for p in ("P1", "P2", "P3"):
        assert [(r["sym"], r["ver"], r["flags"]) for r in tr if r["pass_"] == p] == \
            [("(empty)" if s == "" else s, v, fl) for s, v, fl in reqs]

    wrapped = wrapped_symbols()
    n_wrapped = n_untouched = n_failed = 0
    seen_wrapped = set()
    for u, t in zip(plain, tr):
        key = (u["pass_"], u["sym"], u["ver"], u["flags"])
        assert (t["ret"], t["status"]) == (u["ret"], u["status"]), key
        if u["ret"] != 0:
            # a failing look-up fails the same way: same error, same status,
            # the pointer set to NULL (or left alone) exactly as the driver does
            assert u["fn"] == t["fn"] and u["fn"] in ("NULL", "UNTOUCHED"), key
            n_failed += 1
            continue
        ulib, uname, uoff = split_fn(u["fn"])
        tlib, tname, toff = split_fn(t["fn"])
        assert ulib == "libcuda.so.1" and uoff == "0x0", key
        # the traced pointer is for exactly the driver symbol untraced gets
        assert (tname, toff) == (uname, uoff), key
        if uname in wrapped:
            assert tlib == "libfeedtrace.so", key
        else:
            assert tlib == "libcuda.so.1", key      # untouched: the driver's own
        if u["pass_"] == "P4":
            continue
        if uname in wrapped:
            n_wrapped += 1
            seen_wrapped.add(uname)
        else:
            n_untouched += 1
    # the empty probe is the one failing request of the TSV, in each pass
    assert n_failed == 3 + sum(1 for e in EXTRA if e[3] != 0)
    assert [r["sym"] for r in plain if r["ret"] != 0 and r["pass_"] != "P4"] == ["(empty)"] * 3
    # the look-ups beyond the TSV answer as the driver is documented to
    assert [(r["sym"], r["ver"], r["flags"], r["ret"], r["status"], r["fn"])
            for r in tr if r["pass_"] == "P4"] == EXTRA
    assert all(r["status"] == 1 for r in tr if r["ret"] != 0 and r["pass_"] in ("P1", "P2"))
    assert all(r["status"] == -7 for r in tr if r["pass_"] == "P3")   # v1: no status
    # every request reached a variant, wrapped or not, in each pass; the
    # variants libcudart 13 reaches include at least these wrapped ones
    assert n_wrapped + n_untouched == 3 * (440 - 1)
    assert n_wrapped % 3 == 0 and len(seen_wrapped) == n_wrapped // 3
    core = {"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuMemcpyDtoH_v2",
            "cuMemcpyDtoH_v2_ptds", "cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2_ptsz",
            "cuStreamSynchronize", "cuStreamSynchronize_ptsz", "cuCtxSynchronize",
            "cuCtxSynchronize_v2", "cuEventSynchronize", "cuEventQuery", "cuStreamQuery_ptsz",
            "cuMemAlloc_v2", "cuMemFree_v2", "cuMemHostAlloc", "cuLibraryLoadData",
            "cuGetProcAddress", "cuGetProcAddress_v2", "cuGraphLaunch_ptsz"}
    assert core <= seen_wrapped, core - seen_wrapped
    assert len(seen_wrapped) >= 65
    # examples of the rule, spelled out
    by = {(r["pass_"], r["sym"], r["ver"], r["flags"]): r["fn"] for r in tr}
    assert by[("P1", "cuMemcpyDtoH", 7000, 2)] == "libfeedtrace.so:cuMemcpyDtoH_v2_ptds+0x0"
    assert by[("P1", "cuMemcpyDtoH", 3020, 0)] == "libfeedtrace.so:cuMemcpyDtoH_v2+0x0"
    assert by[("P2", "cuLaunchKernel", 7000, 2)] == "libfeedtrace.so:cuLaunchKernel_ptsz+0x0"
    assert by[("P3", "cuCtxSynchronize", 13000, 0)] == "libfeedtrace.so:cuCtxSynchronize_v2+0x0"
    assert by[("P1", "cuGetProcAddress", 12000, 0)] == "libfeedtrace.so:cuGetProcAddress_v2+0x0"
    assert by[("P1", "cuGetProcAddress", 11030, 0)] == "libfeedtrace.so:cuGetProcAddress+0x0"
    assert by[("P1", "cuDriverGetVersion", 2020, 0)] == "libcuda.so.1:cuDriverGetVersion+0x0"
    # look-ups record nothing
    assert [e for e in run.trace.events if e["call"].startswith("cu")] == []


# The wrapped calls `cuda_replay calls` makes, in order:
# (call, exact driver symbol, ret, sync class, stream, extra fields)
CALLS = [
    ("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", 0, 4, "0x0", {}),
    ("cuCtxSetCurrent", "cuCtxSetCurrent", 0, 4, "0x0", {}),
    ("cuMemAlloc", "cuMemAlloc_v2", 0, 4, "0x0", {"bytes": 4096}),
    ("cuMemAlloc", "cuMemAlloc", 0, 4, "0x0", {"bytes": 4096}),
    ("cuMemcpyHtoD", "cuMemcpyHtoD_v2", 0, 2, "0x0", {"dir": 1, "bytes": 64, "pinned": 0}),
    ("cuMemcpyDtoH", "cuMemcpyDtoH_v2", 0, 2, "0x0", {"dir": 2, "bytes": 64, "pinned": 0}),
    ("cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds", 0, 2, "0x2", {"dir": 1, "bytes": 64}),
    ("cuMemcpyDtoH", "cuMemcpyDtoH_v2_ptds", 0, 2, "0x2", {"dir": 2, "bytes": 64}),
    ("cuMemcpyHtoD", "cuMemcpyHtoD", 0, 2, "0x0", {"dir": 1, "bytes": 64}),
    ("cuMemcpyDtoH", "cuMemcpyDtoH", 0, 2, "0x0", {"dir": 2, "bytes": 64}),
    ("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2_ptsz", 0, 2, "0x2",
     {"dir": 1, "bytes": 64, "pinned": 0}),
    ("cuMemsetD8", "cuMemsetD8_v2_ptds", 0, 2, "0x2", {"dir": 5, "bytes": 128}),
    ("cuMemcpyDtoH", "cuMemcpyDtoH_v2", 0, 2, "0x0", {"dir": 2, "bytes": 64}),
    ("cuLibraryLoadData", "cuLibraryLoadData", 200, 4, "0x0", {"handle": "0x0"}),
    ("cuLibraryLoadData", "cuLibraryLoadData", 0, 4, "0x0", {}),
    ("cuLaunchKernel", "cuLaunchKernel", 0, 0, "0x0",
     {"kernel": "replay_kernel", "gx": 2, "gy": 3, "gz": 4, "bx": 32, "by": 2, "bz": 1}),
    ("cuLaunchKernel", "cuLaunchKernel_ptsz", 0, 0, "0x2",
     {"kernel": "replay_kernel", "gx": 5, "gy": 1, "gz": 1, "bx": 64, "by": 1, "bz": 1}),
    ("cuStreamSynchronize", "cuStreamSynchronize", 0, 1, "0x0", {}),
    ("cuStreamSynchronize", "cuStreamSynchronize_ptsz", 0, 1, "0x2", {}),
    ("cuCtxSynchronize", "cuCtxSynchronize", 0, 1, "0x0", {}),
    ("cuCtxSynchronize", "cuCtxSynchronize_v2", 0, 1, "0x0", {}),
    ("cuMemFree", "cuMemFree_v2", 0, 2, "0x0", {}),
]


def test_calls_through_wrappers(traced):
    plain = run_plain([REPLAY, "calls"]).stdout
    run = traced([REPLAY, "calls"], env=sim_env())
    assert run.returncode == 0, run.stderr
    # the program sees exactly what it sees without the tracer
    assert run.stdout == plain
    assert "cuDriverGetVersion same as dlsym: 1" in plain
    assert "driver version 13000" in plain
    for what in ("roundtrip v2 ok", "roundtrip v2_ptds ok", "roundtrip v1 ok", "memset ok",
                 "cuLibraryLoadData(bad image) ret=200"):
        assert what in plain
    cu = [e for e in run.trace.events if e["call"].startswith("cu")]
    got = [(e["call"], e["args"]["sym"], e["args"]["ret"], e["args"]["sync"],
            e["args"]["stream"]) for e in cu]
    assert got == [c[:5] for c in CALLS]
    for e, c in zip(cu, CALLS):
        for k, v in c[5].items():
            assert e["args"][k] == v, (c, k, e["args"])
    # the context made current is the one retained
    assert cu[0]["args"]["handle"] == cu[1]["args"]["handle"] != "0x0"
    # the v1 allocation really is below 4 GiB (32-bit ABI) and recorded so
    assert int(cu[3]["args"]["ptr"], 16) < 1 << 32


@skip_under(["asan", "tsan"], "the sanitizer runtime interposes libc names too")
def test_dlsym_non_cuda_names_unchanged(traced):
    plain = run_plain([REPLAY, "dlsym"]).stdout.splitlines()
    run = traced([REPLAY, "dlsym"], env=sim_env())
    assert run.returncode == 0, run.stderr
    tr = run.stdout.splitlines()
    assert "mismatches 0" in tr and "mismatches 0" in plain
    assert "libc dlsym is in libc" in tr
    assert len(tr) == len(plain) == 1 + 6 * 15 + 2
    differ = []
    for u, t in zip(plain, tr):
        if u != t:
            differ.append((u, t))
    # only what the preload itself interposes differs: in the global scope,
    # read/open/pthread_mutex_lock/pthread_create are feedtrace's (as for
    # any preload)
    expect = {(h, n) for h in ("RTLD_DEFAULT", "RTLD_NEXT", "self")
              for n in ("read", "open", "pthread_mutex_lock", "pthread_create")}
    assert {tuple(t.split()[:2]) for _, t in differ} == expect
    for u, t in differ:
        assert t.split()[2].startswith("libfeedtrace.so:") and t.endswith(" same")
        assert u.split()[2].startswith("libc.so.6:")
    # every answer is what libc's own dlsym gives, traced or not
    for line in tr[1:-2]:
        assert line.split()[3] == "same", line


@pytest.fixture(scope="module")
def next_lib():
    lib = os.path.join(BUILD, "tests", "cuda_next_lib.so")
    make(lib)
    return lib


@skip_under(["asan", "tsan"], "the sanitizer runtime's read comes next, not libc's")
@pytest.mark.parametrize("order", ["feedtrace-first", "next-first"])
def test_rtld_next_from_another_library(traced, next_lib, tmp_path, order):
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)) * 10)          # 2560 bytes: 26 reads + EOF
    argv = [REPLAY, "read", str(data)]
    plain = run_plain(argv, env={"LD_PRELOAD": next_lib})
    assert plain.stdout == "reads 27 bytes 2560\n"
    assert "next_lib: forwarded 27 reads to libc.so.6" in plain.stderr
    preload = LIB + ":" + next_lib if order == "feedtrace-first" else next_lib + ":" + LIB
    run = traced(argv, env={"LD_PRELOAD": preload})
    assert run.returncode == 0, run.stderr
    assert run.stdout == plain.stdout
    # the other library's read finds the read that really comes next: libc's
    # when it is preloaded after feedtrace, feedtrace's when before; it
    # forwards at least the program's reads (feedtrace's own reads, if any,
    # pass through it too when it comes after feedtrace)
    nxt = "libc.so.6" if order == "feedtrace-first" else "libfeedtrace.so"
    line = [x for x in run.stderr.splitlines() if x.startswith("next_lib:")]
    assert len(line) == 1 and line[0].endswith(" reads to " + nxt), run.stderr
    assert int(line[0].split()[2]) >= 27
    # and feedtrace still records every read of the file
    reads = run.trace.calls("read", path=str(data))
    assert len(reads) == 27
    assert sorted(e["args"]["ret"] for e in reads) == [0, 60] + [100] * 25
