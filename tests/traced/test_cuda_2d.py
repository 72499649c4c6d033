"""2-D/3-D copies and 2-D memsets: direction from the descriptors' memory
types, bytes from the extent, pageable host memory makes a hidden sync."""
import os

from conftest import BUILD, prog


def test_copies_2d_3d(traced):
    r = traced([prog("cu2d_prog")], env={"LD_LIBRARY_PATH": os.path.join(BUILD, "simgpu")})
    assert r.returncode == 0, r.stderr
    t = r.trace
    [a] = t.calls("cuMemcpy2D")
    assert (a["args"]["sym"], a["args"]["dir"], a["args"]["bytes"], a["args"]["sync"],
            a["args"]["pinned"]) == ("cuMemcpy2D_v2", 1, 512, 2, 0)
    [b] = t.calls("cuMemcpy2DAsync")
    assert (b["args"]["dir"], b["args"]["bytes"], b["args"]["sync"], b["args"]["pinned"]) == \
        (2, 128, 2, 0)                      # async into pageable memory: a hidden sync
    [c] = t.calls("cuMemcpy3D")
    assert (c["args"]["dir"], c["args"]["bytes"], c["args"]["sync"]) == (3, 128, 0)
    [m] = t.calls("cuMemsetD2D32")
    assert (m["args"]["dir"], m["args"]["bytes"], m["args"]["sync"]) == (5, 120, 2)
    # the driver's own answers are passed through unchanged
    assert r.stdout.split() == [str(a["args"]["ret"]), str(b["args"]["ret"]),
                                str(c["args"]["ret"]), str(m["args"]["ret"])]
