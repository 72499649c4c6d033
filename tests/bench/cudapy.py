"""cudapy.py: a hidden sync called from Python, for feedtrace's benchmark
(scripts/bench_measure.py runs it with /usr/bin/python3; not a test).

    python3 cudapy.py DRIVER N REPS

Loads DRIVER (the simulated build/simgpu/libcuda.so.1, a test double) with
ctypes.PyDLL, which keeps the GIL held during each call, as PyTorch's own
.item() does not (it releases it), but as any ctypes/cffi caller of the
driver does. Times REPS blocks of N synchronous 4-byte cuMemcpyDtoH_v2 into
pageable memory (a hidden sync: feedtrace captures the native stack and
the innermost Python frames). Like micro.c it alternates
blocks through the function ctypes found by name (interposed by a tracer)
with blocks through the driver's own function (its address from the ELF
symbol table plus the load address from /proc/self/maps), and prints

    pycopy ns_per_call direct_ns_per_call interposed

(medians of the blocks). Set SIMGPU_COPY_LATENCY_NS=0.
"""
import ctypes
import struct
import sys
import time


def elf_dynsym(path, name):
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit("cudapy: %s is not a 64-bit ELF file" % path)
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    for s in secs:
        if s[1] != 11:                       # SHT_DYNSYM
            continue
        stroff = secs[s[6]][4]
        for k in range(s[5] // 24):
            st_name, _info, _other, shndx, value, _size = struct.unpack_from(
                "<IBBHQQ", data, s[4] + k * 24)
            if shndx == 0:
                continue
            end = data.index(b"\0", stroff + st_name)
            if data[stroff + st_name:end] == name.encode():
                return value
    raise SystemExit("cudapy: no %s in %s" % (name, path))


def load_base(path):
    import os
    real = os.path.realpath(path)
    for line in open("/proc/self/maps"):
        f = line.split()
        if len(f) >= 6 and os.path.realpath(f[5]) == real and int(f[2], 16) == 0:
            return int(f[0].split("-")[0], 16)
    raise SystemExit("cudapy: %s is not mapped" % path)


def main():
    path, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    drv = ctypes.PyDLL(path)
    c_int, c_void_p, c_ull, c_size_t = ctypes.c_int, ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_size_t

    def check(r, what):
        if r != 0:
            raise SystemExit("cudapy: %s failed: %d" % (what, r))
    dev, ctx, dptr = c_int(), c_void_p(), c_ull()
    check(drv.cuInit(0), "cuInit")
    check(drv.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    check(drv.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(drv.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    drv.cuMemAlloc_v2.argtypes = [ctypes.POINTER(c_ull), c_size_t]
    check(drv.cuMemAlloc_v2(ctypes.byref(dptr), 4), "cuMemAlloc_v2")
    host = ctypes.create_string_buffer(64)   # pageable: the copy waits

    proto = ctypes.PYFUNCTYPE(c_int, c_void_p, c_ull, c_size_t)
    by_name = drv.cuMemcpyDtoH_v2
    by_name.argtypes = [c_void_p, c_ull, c_size_t]
    by_name.restype = c_int
    addr = load_base(path) + elf_dynsym(path, "cuMemcpyDtoH_v2")
    direct = proto(addr)
    interposed = ctypes.cast(by_name, c_void_p).value != addr
    hp, dp = ctypes.addressof(host), dptr.value

    def block(fn):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn(hp, dp, 4)
        return (time.perf_counter_ns() - t0) / n

    res, dres = [], []
    for k in range(-1, reps):
        for v in (0, 1):
            d = (k & 1) ^ v
            x = block(direct if d else by_name)
            if k >= 0:
                (dres if d else res).append(x)
    res.sort()
    dres.sort()
    print("pycopy %.2f %.2f %d" % (res[reps // 2], dres[reps // 2], int(interposed)))


if __name__ == "__main__":
    main()
