"""NCCL collectives are recorded when libnccl is loaded, linked or through
dlopen + dlsym, with bytes = count x datatype size (a stand-in libnccl)."""
import os

import pytest

from conftest import BUILD, make


@pytest.fixture(scope="module")
def nccl():
    prog = os.path.join(BUILD, "tests", "nccl", "nccl_prog")
    make(prog)
    return os.path.dirname(prog), prog


@pytest.mark.parametrize("mode", ["link", "dlsym"])
def test_nccl_collectives(traced, nccl, mode):
    d, prog = nccl
    r = traced([prog, mode], env={"LD_LIBRARY_PATH": d})
    assert r.returncode == 0 and r.stdout == "nccl ok\n", r.stderr
    t = r.trace
    ar = t.calls("ncclAllReduce")
    assert len(ar) == 3
    assert all(e["args"]["bytes"] == 4096 and e["args"]["stream"] == "0x5678" and
               e["args"]["sym"] == "ncclAllReduce" and e["args"]["sync"] == 0 and
               e["args"]["comm"] == "0x1234" for e in ar)
    [b] = t.calls("ncclBroadcast")
    assert b["args"]["bytes"] == 2048 and b["args"]["peer"] == 1
    [g] = t.calls("ncclAllGather")
    assert g["args"]["bytes"] == 100
    [rs] = t.calls("ncclReduceScatter")
    assert rs["args"]["bytes"] == 128
    assert [e["args"]["bytes"] for e in t.calls("ncclSend")] == [40, 40]
    assert [e["args"]["peer"] for e in t.calls("ncclRecv")] == [3, 3]
    [ge] = t.calls("ncclGroupEnd")
    assert ge["args"]["sync"] == 4
