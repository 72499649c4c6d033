"""life_dataloader.py DIR N: a torch DataLoader with 2 fork workers over the
N files DIR/sample_XXX.bin; each sample is read with open()/read() in the
Dataset. Prints the number of samples and their byte sum."""
import os
import sys

import torch
from torch.utils.data import DataLoader, Dataset

data_dir, n = sys.argv[1], int(sys.argv[2])


class Files(Dataset):
    def __init__(self):
        self.paths = [os.path.join(data_dir, "sample_%03d.bin" % i) for i in range(n)]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            raw = f.read()
        return torch.tensor(list(raw[:16]), dtype=torch.int64)


loader = DataLoader(Files(), batch_size=4, num_workers=2, shuffle=False)
seen = 0
total = 0
for batch in loader:
    seen += batch.shape[0]
    total += int(batch.sum())
print("samples=%d sum=%d" % (seen, total), flush=True)
