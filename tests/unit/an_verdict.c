/*
 * tests/unit/an_verdict.c: the verdict's limit (docs/ANALYSES.md, "The
 * verdict") on shapes of ten 10 ms steps with the timing written in:
 * submission-bound, data-bound whatever the wait (semaphore, condition,
 * poll, pipe read), lock-bound, GPU-bound; without launches, data
 * delivery against a feed that keeps up. The GPU model's busy and idle
 * time and what the idle is charged to are checked exactly.
 */
#include <stdio.h>
#include <string.h>

#include "an.h"
#include "events.h"

#define STEP (10 * MS)
#define FIRST (T0 + 10 * MS)

static void launch(struct an_run *r, int32_t tid, uint64_t stream, uint64_t t)
{
	an_ev(r, tid, FT_EV_CU_LAUNCH_KERNEL, t, 10 * US, "sym", S("cuLaunchKernel"), "kernel",
	      S("k"), "sync", (uint64_t)FT_SYNC_SUBMIT, "stream", stream, NULL);
}

static void ssync(struct an_run *r, int32_t tid, uint64_t stream, uint64_t t, uint64_t dur)
{
	an_ev(r, tid, FT_EV_CU_STREAM_SYNC, t, dur, "sym", S("cuStreamSynchronize"), "sync",
	      (uint64_t)FT_SYNC_WAIT, "stream", stream, NULL);
}

/* Each step: a launch, a sync that returns 1 ms after it, 9 ms of
 * untraced CPU work. The GPU idles 9 ms of every step but the last,
 * behind the CPU work: work submission. */
static void submission(void)
{
	struct an_run r;
	an_init(&r, 100, "./train");
	for (int i = 0; i < 10; i++) {
		uint64_t t = FIRST + (uint64_t)i * STEP;
		launch(&r, 100, 0x10, t);
		ssync(&r, 100, 0x10, t + 10 * US, 990 * US);
	}
	an_analyse(&r);
	EQ(r.v.win_start, FIRST);
	EQ(r.v.win_end, FIRST + 9 * STEP + 1 * MS);
	EQ(r.v.busy_ns, 10 * MS);
	EQ(r.v.idle_ns, 9 * 9 * MS);
	EQ(r.v.idle_by_feed[FT_CAT_CPU], 81 * MS);
	EQ(r.v.t[FT_CAT_GPU_WAIT], 10 * 990 * US);
	EQ(r.v.t[FT_CAT_SUBMIT], 10 * 10 * US);
	EQ(r.v.basis, FT_BASIS_GPU_IDLE);
	EQ(r.v.limit, FT_LIMIT_SUBMISSION);
	an_free(&r);
}

/* Each step: a 7 ms wait for data (each mechanism in turn), then a launch
 * and a sync that returns 1 ms after it, 2 ms of CPU work. The GPU idles
 * 9 ms of each step: 7 waiting for data, 2 behind the CPU. Without a
 * window the verdict is over the whole process; with the one the report
 * takes (first launch to the last drain) the first wait is left out. */
static void data(unsigned kind, int windowed)
{
	struct an_run r;
	an_init(&r, 100, "./train");
	if (windowed) {
		r.o.win_start = FIRST + 7 * MS;
		r.o.win_end = FIRST + 9 * STEP + 8 * MS;
	}
	for (int i = 0; i < 10; i++) {
		uint64_t t = FIRST + (uint64_t)i * STEP;
		switch (kind) {
		case FT_EV_SEM_WAIT:       /* acquired: 0 */
			an_ev(&r, 100, kind, t, 7 * MS, "sem", (uint64_t)0x7000, "ret", (uint64_t)0,
			      NULL);
			break;
		case FT_EV_COND_WAIT:      /* signalled: 0 */
			an_ev(&r, 100, kind, t, 7 * MS, "cond", (uint64_t)0x7000, "ret", (uint64_t)0,
			      NULL);
			break;
		case FT_EV_POLL:           /* one ready descriptor, a pipe */
			an_ev(&r, 100, kind, t, 7 * MS, "ret", (uint64_t)1, "nfds", (uint64_t)1,
			      "timeout", (uint64_t)5000, "kinds", (uint64_t)FT_FDK_PIPE, "fd0",
			      (uint64_t)5, NULL);
			break;
		case FT_EV_PIPE_READ:      /* a batch's bytes */
			an_ev(&r, 100, kind, t, 7 * MS, "fd", (uint64_t)5, "kind",
			      (uint64_t)FT_FDK_PIPE, "req", (uint64_t)4096, "ret", (uint64_t)4096, NULL);
			break;
		}
		launch(&r, 100, 0x10, t + 7 * MS);
		ssync(&r, 100, 0x10, t + 7 * MS + 10 * US, 990 * US);
	}
	an_analyse(&r);
	const char *name = ft_kind(kind)->name;
	EQ(r.v.batches, 10);
	EQ(r.v.win_start, windowed ? FIRST + 7 * MS : FIRST);
	EQ(r.v.win_end, FIRST + 9 * STEP + 8 * MS);
	EQ(r.v.busy_ns, 10 * MS);
	EQ(r.v.idle_ns, 81 * MS);
	EQ(r.v.idle_by_feed[FT_CAT_DATA], 63 * MS);
	EQ(r.v.idle_by_feed[FT_CAT_CPU], 18 * MS);
	EQ(r.v.t[FT_CAT_DATA], (windowed ? 9 : 10) * 7 * MS);
	EQ(r.v.basis, FT_BASIS_GPU_IDLE);
	EQ(r.v.limit, FT_LIMIT_DATA);
	if (an_failed)
		fprintf(stderr, "  (waiting in %s%s)\n", name, windowed ? ", windowed" : "");
	an_free(&r);
}

/* Two launching threads take turns on one lock: each waits 6 ms of every
 * step, 5 ms after the other, then launches on its own stream and syncs
 * 1 ms after it. Some launching thread waits for the lock all along from
 * their second waits (a thread is a launching one from its first launch). */
static void locks(void)
{
	struct an_run r;
	an_init(&r, 100, "./train");
	for (int i = 0; i < 10; i++) {
		for (int k = 0; k < 2; k++) {
			uint64_t t = FIRST + (uint64_t)i * STEP + (uint64_t)k * 5 * MS;
			int32_t tid = 100 + k;
			uint64_t stream = 0x10 + 0x10 * (uint64_t)k;
			an_ev(&r, tid, FT_EV_MUTEX_LOCK, t, 6 * MS, "lock", (uint64_t)0x5000, NULL);
			launch(&r, tid, stream, t + 6 * MS);
			ssync(&r, tid, stream, t + 6 * MS + 10 * US, 990 * US);
		}
	}
	an_analyse(&r);
	EQ(r.v.nfeeders, 2);
	EQ(r.v.lock_union, (FIRST + 9 * STEP + 11 * MS) - (FIRST + STEP));
	EQ(r.v.t[FT_CAT_LOCK], 2 * 10 * 6 * MS);
	EQ(r.v.limit, FT_LIMIT_LOCKS);
	an_free(&r);
}

/* Each step: a launch, a sync that waits 9.89 ms for it, 100 us of CPU
 * work before the next: the GPU is busy 99% of the loop. */
static void gpu(void)
{
	struct an_run r;
	an_init(&r, 100, "./train");
	for (int i = 0; i < 10; i++) {
		uint64_t t = FIRST + (uint64_t)i * STEP;
		launch(&r, 100, 0x10, t);
		ssync(&r, 100, 0x10, t + 10 * US, 9890 * US);
	}
	an_analyse(&r);
	EQ(r.v.win_end, FIRST + 9 * STEP + 9900 * US);
	EQ(r.v.busy_ns, 10 * 9900 * US);
	EQ(r.v.idle_ns, 9 * 100 * US);
	EQ(r.v.idle_by_feed[FT_CAT_CPU], 900 * US);
	EQ(r.v.basis, FT_BASIS_GPU_IDLE);
	EQ(r.v.limit, FT_LIMIT_GPU);
	an_free(&r);
}

/* Each step: a wait for data, a launch, a sync that returns 8 ms after
 * it, untraced CPU work: the GPU idles 2 ms of each step (1.2 ms waiting
 * for data, 0.8 ms behind the CPU), 18% of the window: the largest feed,
 * data, is the limit; idling 1 ms of each (0.6 and 0.4), 9%, under 15%:
 * the GPU is. */
static void gpu_or_feed(uint64_t wait, uint64_t cpu, enum ft_limit want)
{
	struct an_run r;
	an_init(&r, 100, "./train");
	for (int i = 0; i < 10; i++) {
		uint64_t t = FIRST + (uint64_t)i * STEP;
		an_ev(&r, 100, FT_EV_SEM_WAIT, t, wait, "sem", (uint64_t)0x7000, "ret",
		      (uint64_t)0, NULL);
		launch(&r, 100, 0x10, t + wait);
		ssync(&r, 100, 0x10, t + wait + 10 * US, STEP - wait - cpu - 10 * US);
	}
	an_analyse(&r);
	EQ(r.v.win_end, FIRST + 9 * STEP + STEP - cpu);
	EQ(r.v.idle_ns, 9 * (wait + cpu));
	EQ(r.v.idle_by_feed[FT_CAT_DATA], 9 * wait);
	EQ(r.v.idle_by_feed[FT_CAT_CPU], 9 * cpu);
	EQ(r.v.basis, FT_BASIS_GPU_IDLE);
	EQ(r.v.limit, want);
	an_free(&r);
}

/* No launches: a Python loop's main thread receives a batch from a pipe
 * each step, waiting `wait` of its 10 ms: data delivery at 8 ms (80%),
 * none (the feed keeps up) at 1 ms (10%, under 20%). */
static void no_gpu(uint64_t wait, enum ft_limit want)
{
	struct an_run r;
	an_init(&r, 100, "python3 train.py");
	for (int i = 0; i < 10; i++) {
		uint64_t t = FIRST + (uint64_t)i * STEP;
		an_ev(&r, 100, FT_EV_PIPE_READ, t + STEP - wait, wait, "fd", (uint64_t)5, "kind",
		      (uint64_t)FT_FDK_PIPE, "req", (uint64_t)4096, "ret", (uint64_t)4096, NULL);
	}
	an_analyse(&r);
	EQ(r.v.by_launch, 0);
	EQ(r.v.nfeeders, 1);
	EQ(r.v.loop_tid, 100);
	EQ(r.v.batches, 10);
	EQ(r.v.t[FT_CAT_DATA], 10 * wait);
	EQ(r.v.basis, FT_BASIS_THREAD_TIME);
	EQ(r.v.limit, want);
	an_free(&r);
}

int main(void)
{
	submission();
	static const unsigned waits[] = { FT_EV_SEM_WAIT, FT_EV_COND_WAIT, FT_EV_POLL,
					  FT_EV_PIPE_READ };
	for (unsigned i = 0; i < sizeof waits / sizeof *waits; i++)
		for (int w = 0; w < 2; w++)
			data(waits[i], w);
	locks();
	gpu();
	gpu_or_feed(1200 * US, 800 * US, FT_LIMIT_DATA);
	gpu_or_feed(600 * US, 400 * US, FT_LIMIT_GPU);
	no_gpu(8 * MS, FT_LIMIT_DATA);
	no_gpu(1 * MS, FT_LIMIT_NONE);
	return an_done("an_verdict");
}
