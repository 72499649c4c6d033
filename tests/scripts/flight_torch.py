"""A PyTorch training loop on the CPU for the flight recorder's tests
(tests/traced/test_flight.py): a DataLoader with WORKERS workers, an SGD step per
batch, and each step numbered in the trace by the file it creates,
DIR/stepN. Then, by MODE:
  request  steps until DIR/stop exists (the test's `feedtrace flight` meanwhile)
  term     after STEPS steps, SIGTERM to itself
  hang     after STEPS steps, sleeps for ever (no step; the DataLoader lives)

  flight_torch.py MODE WORKERS STEPS DIR
"""
import os
import signal
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Numbers(Dataset):
    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        return torch.full((4,), float(i % 97))


def main():
    mode, workers, steps, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(Numbers(), batch_size=8, num_workers=workers)
    for step, x in enumerate(loader, 1):
        loss = model(x).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        open(os.path.join(d, "step%d" % step), "w").close()
        print("step", step, flush=True)
        time.sleep(0.02)
        if mode == "request" and os.path.exists(os.path.join(d, "stop")):
            break
        if mode != "request" and step == steps:
            if mode == "term":
                os.kill(os.getpid(), signal.SIGTERM)
            print("hung", flush=True)
            time.sleep(3600)


main()
