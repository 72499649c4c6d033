"""py_sites.py: the Python sites of tests/traced/test_pyversions.py, for any
CPython from 3.9 (run under the tracer; only the standard library).

    python py_sites.py sync DRIVER N    N hidden syncs through ctypes.CDLL
                                        (GIL released around each call)
    python py_sites.py storm DIR N      N small files made, then each opened
                                        and read in 512-byte pieces
    python py_sites.py gil              six CPU-bound threads, the first
                                        named "cruncher", that wait for the
                                        GIL (handed over every 10 us)

Each marked line is one the test looks for, as file:line in function.
"""
import ctypes
import os
import sys
import threading


def train_step(drv, dptr, host, n):
    for _ in range(n):
        drv.cuMemcpyDtoH_v2(host, dptr, 4)          # SYNC_LINE


def sync(path, n):
    drv = ctypes.CDLL(path)
    c_ull = ctypes.c_ulonglong
    drv.cuMemAlloc_v2.argtypes = [ctypes.POINTER(c_ull), ctypes.c_size_t]
    drv.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, c_ull, ctypes.c_size_t]
    dev, ctx, dptr = ctypes.c_int(), ctypes.c_void_p(), c_ull()
    for r in (drv.cuInit(0), drv.cuDeviceGet(ctypes.byref(dev), 0),
              drv.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
              drv.cuCtxSetCurrent(ctx), drv.cuMemAlloc_v2(ctypes.byref(dptr), 4)):
        if r != 0:
            raise SystemExit("py_sites: driver call failed: %d" % r)
    host = ctypes.create_string_buffer(64)          # pageable: the copy waits
    train_step(drv, dptr.value, host, n)            # SYNC_CALLER


def load_sample(path):
    with open(path, "rb", buffering=0) as f:        # OPEN_LINE
        return [f.read(512) for _ in range(4)]


def storm(d, n):
    names = [os.path.join(d, "s%04d.bin" % i) for i in range(n)]
    for p in names:
        with open(p, "wb") as f:
            f.write(bytes(2048))
    total = 0
    for p in names:
        total += sum(len(b) for b in load_sample(p))  # OPEN_CALLER
    print(total)


def work():
    s = 0
    for i in range(300000):                        # GIL_LOOP
        s += i                                      # GIL_ADD


def gil():
    sys.setswitchinterval(0.00001)
    ts = [threading.Thread(target=work, name=("cruncher" if k == 0 else None))
          for k in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(ts[0].native_id)


if __name__ == "__main__":
    if sys.argv[1] == "sync":
        sync(sys.argv[2], int(sys.argv[3]))     # MAIN_SYNC
    elif sys.argv[1] == "storm":
        storm(sys.argv[2], int(sys.argv[3]))
    else:
        gil()
