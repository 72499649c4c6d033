"""A PyTorch training loop for the capture gate's tests
(tests/traced/test_capture.py), nothing of feedtrace in it. argv: workers, steps,
DIR, step_ms [, READY, ready_step [, gloo]].

Each item i of the data set is read from its own file DIR/item<i>.bin in
__getitem__, so a worker's opens say which batches it loaded (BATCH items
per batch, in order). Each step spins step_ms of CPU (the model's
compute), then one optimizer step; with "gloo" (ranks started as torchrun
starts them) each step all-reduces a tensor first. After optimizer step
ready_step it creates READY (READY.RANK with gloo), so that a test may
ask for a capture while it runs. Prints "steps N"."""
import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

BATCH = 2


def spin(ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass


class Items(Dataset):
    def __init__(self, n, root):
        self.n, self.root = n, root

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        with open(os.path.join(self.root, "item%d.bin" % i), "rb") as f:
            f.read()
        return torch.full((16,), float(i)), torch.tensor(i % 2)


def main():
    workers, steps, root, step_ms = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    ready = sys.argv[5] if len(sys.argv) > 5 else None
    ready_step = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    gloo = len(sys.argv) > 7 and sys.argv[7] == "gloo"
    if gloo:
        import torch.distributed as dist
        dist.init_process_group("gloo")
        ready += ".%d" % dist.get_rank()
    loader = DataLoader(Items(steps * BATCH, root), batch_size=BATCH, num_workers=workers)
    model = torch.nn.Linear(16, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    done = 0
    for x, y in loader:
        spin(step_ms)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        if gloo:
            t = torch.ones(4)
            dist.all_reduce(t)
        opt.step()
        done += 1
        if ready and done == ready_step:
            open(ready, "w").close()
    if gloo:
        dist.destroy_process_group()
    print("steps %d" % done)


if __name__ == "__main__":
    main()
