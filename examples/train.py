#!/usr/bin/python3
"""train.py: a small real PyTorch training loop with the usual feed problems.

    train.py [--fixed] [--steps N] [--data DIR] [--workers W] [--cpu]

Trains a small CNN on synthetic 3x64x64 images for exactly N steps
(default 40) of 32 samples, with a torch.utils.data.DataLoader with W worker
processes (default 2). Uses CUDA when a GPU is available (unless --cpu),
else the CPU. The data set is written first to DIR (default: a fresh
temporary directory, removed at the end; a given DIR is left in place,
files included), exactly N * 32 samples, so the loader reads each once.

Broken (default):
  - one file per sample (12,300 bytes: a 12-byte header + 3x64x64 uint8),
    read with 4 KiB read() calls until end of file: 5 calls per file
    (3 of 4096 bytes, 1 of 12, 1 at end of file);
  - host batches in pageable memory, copied with a blocking .to(device);
  - loss.item() every step (a device-to-host sync per step on a GPU).
Fixed (--fixed):
  - one file per batch (32 samples, 393,600 bytes), read whole with one
    read() call (the size known from fstat);
  - pin_memory=True and .to(device, non_blocking=True) (on a GPU);
  - the loss summed on the device, read back every 10 steps.

Launched as one rank of several (torchrun's environment: WORLD_SIZE of 2
or more, RANK, MASTER_ADDR, MASTER_PORT), or imported and called as main()
once the caller made the process group (torch.multiprocessing.spawn), it
trains data-parallel over
torch.distributed's gloo backend (DistributedDataParallel: each step's
gradients are all-reduced), each rank on a data set of its own.

Each training step is a range named "step N" (N from 0): through
feedtrace_range_push/_pop when libfeedtrace.so is loaded (ctypes; nothing
otherwise), and through torch.cuda.nvtx on a GPU (recorded when
NVTX_INJECTION64_PATH names libfeedtrace.so, as `feedtrace run` sets it;
seen by Nsight otherwise). `feedtrace report` counts them as steps and
`feedtrace diff` compares time per step.

Prints one line at the end: mode, device, steps, files, seconds.
"""
import argparse
import contextlib
import ctypes
import os
import shutil
import struct
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

BATCH = 32
SHAPE = (3, 64, 64)
SAMPLE_BYTES = 3 * 64 * 64
HEADER = struct.Struct("<iii")           # label, index, magic
MAGIC = 0x46545231                        # "FTR1"
SMALL_READ = 4096
LOG_EVERY = 10


def make_sample(i):
    rng = np.random.default_rng(i)
    label = int(i % 10)
    img = rng.integers(0, 256, size=SAMPLE_BYTES, dtype=np.uint8)
    img[:256] = label * 25                 # something to learn
    return label, img


def write_dataset(root, steps, fixed):
    """Broken: steps*32 files of one sample; fixed: steps files of 32."""
    n = steps * BATCH
    if not fixed:
        for i in range(n):
            label, img = make_sample(i)
            with open(os.path.join(root, "sample%06d.bin" % i), "wb") as f:
                f.write(HEADER.pack(label, i, MAGIC) + img.tobytes())
        return n
    for b in range(steps):
        parts = []
        for i in range(b * BATCH, (b + 1) * BATCH):
            label, img = make_sample(i)
            parts.append(HEADER.pack(label, i, MAGIC) + img.tobytes())
        with open(os.path.join(root, "batch%04d.bin" % b), "wb") as f:
            f.write(b"".join(parts))
    return steps


def decode(buf, off):
    label, idx, magic = HEADER.unpack_from(buf, off)
    assert magic == MAGIC
    img = np.frombuffer(buf, dtype=np.uint8, count=SAMPLE_BYTES, offset=off + HEADER.size)
    return label, img


class SampleFiles(Dataset):
    """One sample per file, read 4 KiB at a time (unbuffered: one read()
    system call per 4 KiB)."""

    def __init__(self, root, n):
        self.paths = [os.path.join(root, "sample%06d.bin" % i) for i in range(n)]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        chunks = []
        with open(self.paths[i], "rb", buffering=0) as f:
            while True:
                c = f.read(SMALL_READ)
                if not c:
                    break
                chunks.append(c)
        label, img = decode(b"".join(chunks), 0)
        x = torch.from_numpy(img.astype(np.float32).reshape(SHAPE) / 255.0)
        return x, label


class BatchFiles(Dataset):
    """One batch per file, read whole with one read()."""

    def __init__(self, root, n):
        self.paths = [os.path.join(root, "batch%04d.bin" % b) for b in range(n)]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, b):
        fd = os.open(self.paths[b], os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            buf = os.read(fd, size)
        finally:
            os.close(fd)
        rec = HEADER.size + SAMPLE_BYTES
        assert len(buf) == BATCH * rec
        labels = np.empty(BATCH, dtype=np.int64)
        imgs = np.empty((BATCH, SAMPLE_BYTES), dtype=np.uint8)
        for k in range(BATCH):
            labels[k], imgs[k] = decode(buf, k * rec)
        x = torch.from_numpy(imgs.astype(np.float32).reshape((BATCH,) + SHAPE) / 255.0)
        return x, torch.from_numpy(labels)


def step_marker(cuda):
    """A context manager factory marking one training step as a range."""
    try:
        lib = ctypes.CDLL(None)
        push, pop = lib.feedtrace_range_push, lib.feedtrace_range_pop
        push.argtypes, push.restype, pop.restype = [ctypes.c_char_p], None, None
    except (AttributeError, OSError):           # not traced: no feedtrace symbols
        push = pop = None

    @contextlib.contextmanager
    def step(i):
        name = "step %d" % i
        if push:
            push(name.encode())
        if cuda:
            torch.cuda.nvtx.range_push(name)
        try:
            yield
        finally:
            if cuda:
                torch.cuda.nvtx.range_pop()
            if pop:
                pop()
    return step


def dist_init():
    """torch.distributed over gloo when launched as a rank of a job of two
    or more (torchrun's environment), or when the caller made the process
    group already (torch.multiprocessing.spawn); None otherwise."""
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        return dist
    if int(os.environ.get("WORLD_SIZE", "1")) < 2:
        return None
    dist.init_process_group("gloo")
    return dist


def model():
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 16 * 16, 10))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--data", help="directory for the data set (must exist)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cpu", action="store_true", help="do not use CUDA even if available")
    args = ap.parse_args()

    cuda = torch.cuda.is_available() and not args.cpu
    device = torch.device("cuda" if cuda else "cpu")
    torch.manual_seed(0)
    own_dir = args.data is None
    root = tempfile.mkdtemp(prefix="feedtrace-train-") if own_dir else args.data
    try:
        nfiles = write_dataset(root, args.steps, args.fixed)
        if args.fixed:
            ds = BatchFiles(root, args.steps)
            loader = DataLoader(ds, batch_size=None, shuffle=False,
                                num_workers=args.workers, pin_memory=cuda)
        else:
            ds = SampleFiles(root, args.steps * BATCH)
            loader = DataLoader(ds, batch_size=BATCH, shuffle=False,
                                num_workers=args.workers, pin_memory=False)
        dist = dist_init()
        net = model().to(device)
        if dist:
            net = nn.parallel.DistributedDataParallel(net)
        opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
        lossf = nn.CrossEntropyLoss()

        t0 = time.time()
        steps = 0
        last = float("nan")
        running = torch.zeros((), device=device)
        step = step_marker(cuda)
        batches = iter(loader)
        for i in range(args.steps):       # the loader holds exactly args.steps batches
            with step(i):                 # waiting for the batch is part of the step
                x, y = next(batches)
                if args.fixed:
                    x = x.to(device, non_blocking=True)
                    y = y.to(device, non_blocking=True)
                else:
                    x = x.to(device)
                    y = y.to(device)
                opt.zero_grad(set_to_none=True)
                loss = lossf(net(x), y)
                loss.backward()
                opt.step()
                steps += 1
                if args.fixed:
                    running += loss.detach()
                    if steps % LOG_EVERY == 0 or steps == args.steps:
                        last = running.item() / (LOG_EVERY if steps % LOG_EVERY == 0
                                                 else steps % LOG_EVERY)
                        running.zero_()
                else:
                    last = loss.item()            # a sync per step on a GPU
        assert next(batches, None) is None
        if cuda:
            torch.cuda.synchronize()
        dt = time.time() - t0
        assert steps == args.steps, (steps, args.steps)
        rank = " rank %d/%d," % (dist.get_rank(), dist.get_world_size()) if dist else ""
        if dist:
            dist.destroy_process_group()
        print("train.py%s:%s device %s, %d steps of %d, %d files, %d loader workers, "
              "loss %.3f, %.2f s" % (" --fixed" if args.fixed else "", rank, device.type,
                                     steps, BATCH, nfiles, args.workers, last, dt))
    finally:
        if own_dir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
