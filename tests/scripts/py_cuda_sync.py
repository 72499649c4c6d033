"""py_cuda_sync.py: hidden syncs from Python through ctypes, for
tests/traced/test_pyframes.py (run under the tracer against the simulated
driver, a test double).

    python3 py_cuda_sync.py DRIVER N

Loads DRIVER twice: with ctypes.CDLL, which releases the GIL around each
foreign call (as PyTorch does around .item()), and with ctypes.PyDLL,
which keeps it. Each of the marked lines below makes N synchronous 4-byte
cuMemcpyDtoH_v2 copies into pageable memory (hidden syncs), the first one
from a helper thread too, so that the test can look for exactly these
file:line call sites.
"""
import ctypes
import sys
import threading


def open_driver(path, loader):
    drv = loader(path)
    c_ull = ctypes.c_ulonglong
    drv.cuMemAlloc_v2.argtypes = [ctypes.POINTER(c_ull), ctypes.c_size_t]
    drv.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, c_ull, ctypes.c_size_t]
    return drv


def setup(drv):
    dev, ctx, dptr = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_ulonglong()
    for r in (drv.cuInit(0), drv.cuDeviceGet(ctypes.byref(dev), 0),
              drv.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
              drv.cuCtxSetCurrent(ctx), drv.cuMemAlloc_v2(ctypes.byref(dptr), 4)):
        if r != 0:
            raise SystemExit("py_cuda_sync: driver call failed: %d" % r)
    return dptr.value


def loss_item(drv, dptr, host, n):
    for _ in range(n):
        drv.cuMemcpyDtoH_v2(host, dptr, 4)          # LINE_RELEASED


def loss_item_gil(drv, dptr, host, n):
    for _ in range(n):
        drv.cuMemcpyDtoH_v2(host, dptr, 4)          # LINE_HELD


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    released = open_driver(path, ctypes.CDLL)
    held = open_driver(path, ctypes.PyDLL)
    dptr = setup(released)
    host = ctypes.create_string_buffer(64)          # pageable: the copy waits
    loss_item(released, dptr, host, n)             # CALL_MAIN
    loss_item_gil(held, dptr, host, n)             # CALL_GIL

    def worker():
        released.cuCtxSetCurrent(ctypes.c_void_p(None))
        setup(released)
        loss_item(released, dptr, host, n)         # CALL_WORKER
    t = threading.Thread(target=worker)
    t.start()
    t.join()


if __name__ == "__main__":
    main()                                          # CALL_MODULE
