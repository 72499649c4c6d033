"""readv/preadv with more iovecs than the kernel takes (tests/progs/io_iov.c):
the call fails with EINVAL, and its record says the bytes the program
asked for (32,800 for 1,025 iovecs of 32 bytes; before: 32,768, the first
1,024 only). A count past the array's end (5,000, the array followed by
an inaccessible page) must not fault in the tracer: it reads what it can
(the 1,025 entries) and the program sees EINVAL as untraced."""
from conftest import built_prog, untraced

IOV = built_prog("io_iov")


def test_more_iovecs_than_the_kernel_takes(traced, tmp_path):
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)) * 160)       # 40,960 bytes
    plain = untraced([IOV, str(data)])
    r = traced([IOV, str(data)])
    assert (r.returncode, r.stdout) == (plain.returncode, plain.stdout) == (0, (
        "1024: 32768 \n1024: 32768 \n"
        "1025: -1 Invalid argument\n1025: -1 Invalid argument\n"
        "5000: -1 Invalid argument\n5000: -1 Invalid argument\n")), r.stderr
    t = r.trace
    for call in ("readv", "preadv"):
        got = [(e["args"]["req"], e["args"]["ret"], e["args"]["path"]) for e in t.calls(call)]
        assert got == [(32768, 32768, str(data)), (32800, -22, str(data)),
                       (32800, -22, str(data))]
    assert t.procs[0]["lost"] == 0
