"""A training-like loop fed by forked worker processes that prefetch, as a
user writes one without feedtrace in mind (issue 31, item 1): most steps
find a batch waiting and take ~100 us, one in a few waits for the next.

    prefetch_loader.py cpu   [--workers N] [--steps S]   each batch ~1 ms of CPU
    prefetch_loader.py files DIR [--whole] [--steps S]   each batch reads 4 small
                                                         files, in 512-byte pieces
                                                         (--whole: one read each)

Prints its own clock on stderr: "own: S steps in X ms, Y us per step".
"""
import argparse
import multiprocessing as mp
import os
import sys
import time


def spin(us):
    end = time.perf_counter() + us / 1e6
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def cpu_worker(q, n, k, nw):
    for i in range(k, n, nw):
        spin(1000)
        q.put((i, b"x" * 1024))


def files_worker(q, n, k, nw, d, whole):
    names = sorted(os.listdir(d))
    for i in range(k, n, nw):
        got = 0
        for j in range(4):
            with open(os.path.join(d, names[(4 * i + j) % len(names)]), "rb", buffering=0) as f:
                if whole:
                    got += len(f.read())
                else:
                    while True:
                        b = f.read(512)
                        if not b:
                            break
                        got += len(b)
        q.put((i, got))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["cpu", "files"])
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--whole", action="store_true")
    ap.add_argument("--steps", type=int, default=300)
    a = ap.parse_args()
    if a.mode == "files" and not os.path.isdir(a.dir or ""):
        os.makedirs(a.dir)
        for i in range(64):
            with open(os.path.join(a.dir, "s%03d.bin" % i), "wb") as f:
                f.write(os.urandom(64 * 1024))
    ctx = mp.get_context("fork")
    q = ctx.Queue(maxsize=2 * a.workers)          # prefetch: two batches per worker
    ws = []
    for k in range(a.workers):
        args = (q, a.steps, k, a.workers) + ((a.dir, a.whole) if a.mode == "files" else ())
        ws.append(ctx.Process(target=cpu_worker if a.mode == "cpu" else files_worker,
                              args=args))
    for w in ws:
        w.start()
    t0 = None
    for s in range(a.steps):
        q.get()
        if t0 is None:
            t0 = time.perf_counter()              # the loop, from the first batch
        spin(100)                                 # the step's own work
    t1 = time.perf_counter()
    for w in ws:
        w.join()
    n = a.steps - 1
    print("own: %d steps in %.1f ms, %.1f us per step" % (n, (t1 - t0) * 1e3, (t1 - t0) / n * 1e6),
          file=sys.stderr)


if __name__ == "__main__":
    main()
