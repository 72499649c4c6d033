"""spawn_train.py: examples/train.py as the ranks of a job started by
torch.multiprocessing.spawn, for tests, the way its tutorials do it: each
rank makes its process group itself (init_process_group with a tcp://
address, its rank and the world size), so no process has a launcher's
rank identity in its environment (the converter takes it from the gloo
collectives); the slow rank's environment gets SLOWREAD_MATCH/SLOWREAD_US
(tests/slowread, preloaded in every process) for its DataLoader workers to
inherit. Prints "fact rank R PID" for each rank.

    spawn_train.py N SLOW_RANK SLOW_US PORT -- TRAIN_ARGS...
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "train.py")


def rank_main(r, n, slow, slow_us, port, args):
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=r,
                            world_size=n)
    if r == slow:
        os.environ.update(SLOWREAD_MATCH="feedtrace-train-", SLOWREAD_US=str(slow_us))
    print("fact rank %d %d" % (r, os.getpid()), flush=True)
    sys.argv = [TRAIN] + args
    sys.path.insert(0, os.path.dirname(TRAIN))
    import train
    train.main()


if __name__ == "__main__":
    import torch.multiprocessing as mp
    n, slow, slow_us, port = (int(a) for a in sys.argv[1:5])
    assert sys.argv[5] == "--"
    mp.spawn(rank_main, args=(n, slow, slow_us, port, sys.argv[6:]), nprocs=n)
