/*
 * ranks: a job of several ranks meeting at all-reduces (issue 18's
 * shape), on the simulated driver and the stand-in NCCL whose collectives
 * really wait for every rank (tests/nccl/fake_nccl.c, found as
 * libnccl.so.2 on LD_LIBRARY_PATH). Run without RANK, it is the launcher,
 * as torchrun: it starts one process per rank (this program again, exec'd
 * with RANK, LOCAL_RANK, WORLD_SIZE and the communicator's id in its
 * environment) and waits for them. Each rank: a loader thread fills a
 * 2-slot queue with batches; the main thread, per step, takes a batch,
 * launches a 2 ms kernel, waits for it (cuStreamSynchronize) and
 * all-reduces its result (ncclAllReduce on the kernel's stream): the ranks
 * leave each all-reduce together, so without a plant they arrive at the
 * next one together.
 *
 *   --ranks N     4 by default (2 to 8)
 *   --steps N     30 by default
 *   --slow R      the rank with the planted feed (default none)
 *   --plant data  (default) rank R's loader takes 20 ms per batch (a slow
 *                 read: it sleeps), the others' 1 ms: rank R's main thread
 *                 waits for data, the others wait for rank R in the
 *                 all-reduce
 *   --plant sync  rank R copies 4 KiB from pageable memory after its kernel
 *                 (cuMemcpyHtoDAsync: a hidden sync, waiting for the
 *                 kernel), then spends 8 ms on the CPU with nothing queued
 *   --hosts       each rank as if on a host of its own ("node R",
 *                 FEEDTRACE_TEST_HOST) whose wall clock is off by
 *                 (R * 37 mod 100) - 50 ms (FEEDTRACE_TEST_REALTIME_SKEW_NS):
 *                 the report must put them back on one clock
 *   --out-per-rank each rank traces into a directory of its own,
 *                 $FEEDTRACE_OUT/rank-R (as a Slurm or torchrun recipe
 *                 does, docs/ANALYSES.md "Ranks"), the launcher into
 *                 $FEEDTRACE_OUT
 *
 * Facts printed (by the launcher): "fact rank R PID" per rank, and with
 * --hosts "fact skew R NS".
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "vshape.h"

#define STEPS 30                 /* by default; --steps N */
#define SLOTS 2
#define MAX_RANKS 8

typedef struct { char internal[128]; } nccl_id;
typedef int (*init_rank_t)(void **, int, nccl_id, int);
typedef int (*allreduce_t)(const void *, void *, size_t, int, int, void *, void *);

static const char image[] = "kernel step 2000000\n";

static uint64_t load_ns;
static int steps = STEPS;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static int queue[SLOTS], head, count;

static void *loader(void *arg)
{
	(void)arg;
	for (int b = 0; b < steps; b++) {
		struct timespec ts = { 0, (long)load_ns };
		nanosleep(&ts, NULL);           /* a slow read */
		pthread_mutex_lock(&mu);
		while (count == SLOTS)
			pthread_cond_wait(&not_full, &mu);
		queue[(head + count) % SLOTS] = b;
		count++;
		pthread_mutex_unlock(&mu);
		pthread_cond_signal(&not_empty);
	}
	return NULL;
}

static int take(void)
{
	pthread_mutex_lock(&mu);
	while (count == 0)
		pthread_cond_wait(&not_empty, &mu);
	int b = queue[head];
	head = (head + 1) % SLOTS;
	count--;
	pthread_mutex_unlock(&mu);
	pthread_cond_signal(&not_full);
	return b;
}

static int rank_main(int rank, int world, int slow, int sync_plant)
{
	void *h = dlopen("libnccl.so.2", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "ranks: %s\n", dlerror());
		return 1;
	}
	init_rank_t init_rank = (init_rank_t)dlsym(h, "ncclCommInitRank");
	allreduce_t allreduce = (allreduce_t)dlsym(h, "ncclAllReduce");
	const char *name = getenv("RANKS_NCCL_ID");
	if (!init_rank || !allreduce || !name) {
		fprintf(stderr, "ranks: no ncclCommInitRank, ncclAllReduce or RANKS_NCCL_ID\n");
		return 1;
	}
	nccl_id id = { { 0 } };
	snprintf(id.internal, sizeof id.internal, "%s", name);
	void *comm = NULL;
	if (init_rank(&comm, world, id, rank) != 0) {
		fprintf(stderr, "ranks: ncclCommInitRank failed\n");
		return 1;
	}
	cudrv_init();
	CUlibrary lib = cudrv_library(image);
	CUfunction step = cudrv_kernel(lib, "step");
	CUdeviceptr d;
	CK(cu.MemAlloc(&d, 4096));
	void *args[] = { &d };
	char *pageable = malloc(4096);
	if (!pageable)
		vs_die("malloc");
	memset(pageable, 1, 4096);
	/* the stream the kernels go to: the thread's own with the per-thread
	 * default stream (CU_STREAM_PER_THREAD), else the legacy one */
	void *stream = strcmp(cu.path, "proc-ptds") == 0 ? (void *)2 : NULL;
	load_ns = rank == slow && !sync_plant ? 20000000 : 1000000;
	pthread_t th;
	pthread_create(&th, NULL, loader, NULL);
	int sum = 0;
	for (int s = 0; s < steps; s++) {
		sum += take();
		CK(cu.LaunchKernel(step, 128, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
		if (rank == slow && sync_plant) {
			CK(cu.MemcpyHtoDAsync(d, pageable, 4096, NULL));   /* waits for the kernel */
			vs_busy(8000000);
		}
		CK(cu.StreamSynchronize(NULL));
		if (allreduce((void *)d, (void *)d, 1024, 7, 0, comm, stream) != 0) {
			fprintf(stderr, "ranks: ncclAllReduce failed\n");
			return 1;
		}
	}
	pthread_join(th, NULL);
	free(pageable);
	return sum == steps * (steps - 1) / 2 ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *r = getenv("RANK"), *w = getenv("WORLD_SIZE");
	int slow = atoi(vs_opt(argc, argv, "--slow", "-1"));
	const char *plant = vs_opt(argc, argv, "--plant", "data");
	steps = atoi(vs_opt(argc, argv, "--steps", "30"));
	if ((strcmp(plant, "data") && strcmp(plant, "sync")) || steps < 1) {
		fprintf(stderr, "usage: ranks [--ranks 2-%d] [--slow R] [--plant data|sync] "
			"[--steps N] [--hosts] [--out-per-rank]\n", MAX_RANKS);
		return 2;
	}
	if (r && w)
		return rank_main(atoi(r), atoi(w), slow, !strcmp(plant, "sync"));
	int n = atoi(vs_opt(argc, argv, "--ranks", "4")), hosts = vs_flag(argc, argv, "--hosts");
	int per_rank = vs_flag(argc, argv, "--out-per-rank");
	const char *out = getenv("FEEDTRACE_OUT");
	if (n < 2 || n > MAX_RANKS) {
		fprintf(stderr, "ranks: --ranks from 2 to %d\n", MAX_RANKS);
		return 2;
	}
	char id[64];
	snprintf(id, sizeof id, "/ft-ranks-%d", (int)getpid());
	setenv("RANKS_NCCL_ID", id, 1);
	char ws[16];
	snprintf(ws, sizeof ws, "%d", n);
	setenv("WORLD_SIZE", ws, 1);
	pid_t pid[MAX_RANKS];
	for (int i = 0; i < n; i++) {
		char rs[16];
		snprintf(rs, sizeof rs, "%d", i);
		long long skew = ((long long)i * 37 % 100 - 50) * 1000000;
		if (hosts)
			FACT("skew", "%d %lld", i, skew);
		pid[i] = fork();
		if (pid[i] < 0)
			vs_die("fork");
		if (pid[i] == 0) {
			setenv("RANK", rs, 1);
			setenv("LOCAL_RANK", rs, 1);
			if (hosts) {
				char host[32], ns[32];
				snprintf(host, sizeof host, "node%d", i);
				snprintf(ns, sizeof ns, "%lld", skew);
				setenv("FEEDTRACE_TEST_HOST", host, 1);
				setenv("FEEDTRACE_TEST_REALTIME_SKEW_NS", ns, 1);
				setenv("LOCAL_RANK", "0", 1);
			}
			if (per_rank && out) {
				char dir[4096];
				snprintf(dir, sizeof dir, "%s/rank-%d", out, i);
				setenv("FEEDTRACE_OUT", dir, 1);
			}
			execv("/proc/self/exe", argv);
			vs_die("execv");
		}
		FACT("rank", "%d %d", i, (int)pid[i]);
	}
	int bad = 0;
	for (int i = 0; i < n; i++) {
		int st;
		if (waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	shm_unlink(id);
	if (bad)
		fprintf(stderr, "ranks: a rank failed\n");
	else
		printf("ranks: %d ranks x %d steps, slow rank %d (%s)\n", n, steps, slow, plant);
	return bad;
}
