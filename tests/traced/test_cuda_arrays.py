"""CUDA-array copies (AtoH, HtoA, AtoD, DtoA, AtoA, AtoHAsync, HtoAAsync),
3-D peer copies and batch copies (cuMemcpyBatchAsync, cuMemcpy3DBatchAsync)
on the simulated driver, reached three ways: linked against libcuda, dlopen +
dlsym of the exact exports, and cuGetProcAddress_v2 by API name, version and
flags. Each call leaves one record naming the exact export, with the copy's
direction, bytes, stream, sync class and pinned flag; the driver's results
are passed through unchanged, and the bytes really move (tests/progs/
cu_array_prog.c checks them)."""
import os

import pytest

from conftest import BUILD, make, prog, untraced

SIMGPU = os.path.join(BUILD, "simgpu")

S = "s"          # the program's own stream (checked below to be one handle)
# (call, exact export, ret, dir, bytes, sync, pinned, stream) in program order;
# dir 1 HtoD, 2 DtoH, 3 DtoD (arrays are device memory), 4 peer, 0 unified;
# sync 0 submit, 2 hidden sync; pinned 1 page-locked, 0 pageable, -1 no host side
EXPECT = [
    ("cuMemcpyHtoA", "cuMemcpyHtoA_v2", 0, 1, 1024, 2, 0, "0x0"),
    ("cuMemcpyAtoA", "cuMemcpyAtoA_v2", 0, 3, 1024, 0, -1, "0x0"),
    ("cuMemcpyAtoD", "cuMemcpyAtoD_v2", 0, 3, 512, 0, -1, "0x0"),
    ("cuMemcpyDtoA", "cuMemcpyDtoA_v2_ptds", 0, 3, 256, 0, -1, "0x2"),
    ("cuMemcpyAtoH", "cuMemcpyAtoH_v2", 0, 2, 1024, 2, 0, "0x0"),
    ("cuMemcpyAtoHAsync", "cuMemcpyAtoHAsync_v2", 0, 2, 256, 0, 1, S),
    ("cuMemcpyHtoAAsync", "cuMemcpyHtoAAsync_v2_ptsz", 0, 1, 128, 2, 0, "0x2"),
    ("cuMemcpyHtoAAsync", "cuMemcpyHtoAAsync_v2", 0, 1, 64, 0, 1, S),
    ("cuMemcpyAtoH", "cuMemcpyAtoH", 0, 2, 32, 2, 0, "0x0"),
    ("cuMemcpy3DPeer", "cuMemcpy3DPeer", 0, 4, 128, 2, -1, "0x0"),
    ("cuMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync", 0, 1, 64, 2, 0, S),
    ("cuMemcpy3DPeerAsync", "cuMemcpy3DPeerAsync_ptsz", 0, 2, 64, 0, 1, "0x2"),
    ("cuMemcpyBatchAsync", "cuMemcpyBatchAsync_v2", 0, 0, 600, 0, 1, S),
    ("cuMemcpyBatchAsync", "cuMemcpyBatchAsync_v2_ptsz", 0, 0, 120, 2, 0, "0x2"),
    # refused by the driver (legacy stream): CUDA_ERROR_INVALID_VALUE; its
    # arrays are not read: 0 bytes, pinned not checked, not a hidden sync
    ("cuMemcpyBatchAsync", "cuMemcpyBatchAsync", 1, 0, 0, 0, -1, "0x0"),
    ("cuMemcpy3DBatchAsync", "cuMemcpy3DBatchAsync_v2", 0, 0, 8 * 4 + 16 * 2, 0, 1, S),
    ("cuMemcpy3DBatchAsync", "cuMemcpy3DBatchAsync_ptsz", 0, 0, 4 * 4, 2, 0, "0x2"),
]
NAMES = sorted({e[0] for e in EXPECT})


@pytest.fixture(scope="module")
def programs():
    linked = os.path.join(BUILD, "tests", "cu_array_prog_linked")
    make(prog("cu_array_prog"), linked)
    return {"link": linked, "dlsym": prog("cu_array_prog"), "proc": prog("cu_array_prog")}


def sim_env():
    return {"LD_LIBRARY_PATH": SIMGPU}


@pytest.mark.parametrize("path", ["link", "dlsym", "proc"])
def test_array_peer_batch_copies(traced, programs, path):
    argv = [programs[path], path]
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    e.update(sim_env())
    u = untraced(argv, env=e)
    r = traced(argv, env=sim_env())
    assert r.returncode == u.returncode == 0, r.stderr
    assert r.stdout == u.stdout
    for check in ("array roundtrip", "dtoa", "v1", "peer", "batch3d"):
        assert check + " ok" in r.stdout, r.stdout
    assert r.stdout.count("failIdx none") == 2
    recs = [e for e in r.trace.events if e["call"] in NAMES]
    got = [(e["call"], e["args"]["sym"], e["args"]["ret"], e["args"]["dir"], e["args"]["bytes"],
            e["args"]["sync"], e["args"]["pinned"], e["args"]["stream"]) for e in recs]
    streams = {g[7] for g, x in zip(got, EXPECT) if x[7] == S}
    assert len(streams) == 1 and streams.isdisjoint({"0x0", "0x1", "0x2"}), streams
    assert [g[:7] + ((S,) if g[7] in streams else (g[7],)) for g in got] == EXPECT
    # the results the program saw are the ones recorded
    shown = [int(line.rsplit("ret=", 1)[1]) for line in r.stdout.splitlines() if " ret=" in line]
    assert shown == [x[2] for x in EXPECT]
    # hidden syncs carry their call site (headline: the program's frame), submissions none
    assert all(e["args"]["site"].startswith("main (cu_array_prog.c:") == (x[5] == 2)
               for e, x in zip(recs, EXPECT))
    # every other wrapped call the program made is recorded once too
    assert r.trace.count("cuStreamSynchronize") == 3
