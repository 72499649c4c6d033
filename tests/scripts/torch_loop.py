"""A PyTorch training loop with an evaluation pass each epoch, nothing of
feedtrace in it (tests/traced/test_pytorch_loop.py). argv: workers, cpu|io,
epochs, training batches per epoch, DIR (the data files for io), and
"ranges" to mark its own steps with feedtrace's range functions.

The data is slow: each item costs ITEM_MS of CPU in __getitem__ (cpu), or
a read of its own file in DIR (io: the test makes the storage slow). It
prints its own clock: the optimizer steps it made and, over the training
steps, the time inside next() over the time of the steps (a step runs
from one optimizer.step() to the next, the epoch's first from its first
next()), as the truth. The training loop takes exactly its batches from
the iterator; the evaluation loop runs its loader to the end."""
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

ITEM_MS = 6
BATCH = 4


def spin(ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass


class TrainSet(Dataset):
    def __init__(self, n, mode, root):
        self.n, self.mode, self.root = n, mode, root

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.mode == "io":
            with open(os.path.join(self.root, "item%d.bin" % (i % 8)), "rb") as f:
                f.read()
        else:
            spin(ITEM_MS)
        return torch.full((16,), float(i)), torch.tensor(i % 2)


class ValSet(TrainSet):
    pass


def main():
    workers, mode, epochs, batches, root = (int(sys.argv[1]), sys.argv[2], int(sys.argv[3]),
                                            int(sys.argv[4]), sys.argv[5])
    ranges = len(sys.argv) > 6 and sys.argv[6] == "ranges"
    if ranges:
        import ctypes
        lib = ctypes.CDLL(None)
    train = DataLoader(TrainSet(batches * BATCH, mode, root), batch_size=BATCH,
                       num_workers=workers)
    val = DataLoader(ValSet(3 * BATCH, mode, root), batch_size=BATCH, num_workers=workers)
    model = torch.nn.Linear(16, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    steps, data, total = 0, 0.0, 0.0
    for _ in range(epochs):
        model.train()
        it = iter(train)
        last = None
        for _ in range(batches):
            if ranges:
                lib.feedtrace_range_push(b"step")
            t0 = time.perf_counter()
            if last is None:
                last = t0
            x, y = next(it)
            data += time.perf_counter() - t0
            spin(2)                                   # the model's compute
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if ranges:
                lib.feedtrace_range_pop()
            now = time.perf_counter()
            total += now - last
            last = now
            steps += 1
        del it
        model.eval()
        with torch.no_grad():
            for x, y in val:
                model(x)
    print("steps %d data %.4f" % (steps, data / total))


if __name__ == "__main__":
    main()
