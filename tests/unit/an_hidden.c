/*
 * tests/unit/an_hidden.c: hidden syncs (docs/ANALYSES.md, "Hidden syncs"):
 * grouped by Python site, else by (symbol, thread); each group's count,
 * total, maximum, bursts, threads; the GPU idle the model charges to
 * them, and the verdict they make (synchronization).
 */
#include <string.h>

#include "an.h"

static void launch(struct an_run *r, int32_t tid, uint64_t t)
{
	an_ev(r, tid, FT_EV_CU_LAUNCH_KERNEL, t, 10 * US, "sym", S("cuLaunchKernel"),
	      "kernel", S("k"), "sync", (uint64_t)FT_SYNC_SUBMIT, "stream", (uint64_t)0, NULL);
}

/* a synchronous copy (a hidden sync) on the legacy stream; py: its
 * Python site, or NULL */
static void copy(struct an_run *r, int32_t tid, unsigned kind, const char *sym, uint64_t t,
		 uint64_t dur, const char *py)
{
	if (py)
		an_ev(r, tid, kind, t, dur, "sym", S(sym), "dir", (uint64_t)2, "sync",
		      (uint64_t)FT_SYNC_HIDDEN, "stream", (uint64_t)0, "py", S(py), NULL);
	else
		an_ev(r, tid, kind, t, dur, "sym", S(sym), "dir", (uint64_t)2, "sync",
		      (uint64_t)FT_SYNC_HIDDEN, "stream", (uint64_t)0, NULL);
}

static void groups(void)
{
	struct an_run r;
	an_init(&r, 100, "python3 train.py");
	for (int i = 0; i < 5; i++) {
		uint64_t t = T0 + 10 * MS + (uint64_t)i * 10 * MS;
		launch(&r, 100, t);
		copy(&r, 100, FT_EV_CU_MEMCPY_DTOH, "cuMemcpyDtoH_v2", t + 100 * US, 2 * MS,
		     "train.py:42 in step");
		if (i % 2 == 0)
			an_ev(&r, 100, FT_EV_CU_MEM_FREE, t + 3 * MS, 500 * US, "sym", S("cuMemFree_v2"),
			      "sync", (uint64_t)FT_SYNC_HIDDEN, "stream", (uint64_t)0,
			      "py", S("train.py:50 in free"), NULL);
	}
	/* no site recorded: one group per (symbol, thread) */
	copy(&r, 100, FT_EV_CU_MEMCPY_HTOD, "cuMemcpyHtoD_v2", T0 + 70 * MS, 300 * US, NULL);
	copy(&r, 100, FT_EV_CU_MEMCPY_HTOD, "cuMemcpyHtoD_v2", T0 + 71 * MS, 100 * US, NULL);
	copy(&r, 101, FT_EV_CU_MEMCPY_HTOD, "cuMemcpyHtoD_v2", T0 + 72 * MS, 200 * US, NULL);
	an_analyse(&r);

	EQ(r.m.hidden, 5 + 3 + 3);
	EQ(r.m.hidden_ns, 5 * 2 * MS + 3 * 500 * US + 600 * US);
	EQ(an_count(&r, FT_FK_HIDDEN), 4);
	/* in order of their first sync */
	const struct ft_finding *f = an_nth(&r, FT_FK_HIDDEN, 0);
	STREQ(f->site, "train.py:42 in step");
	STREQ(f->symbol, "cuMemcpyDtoH_v2");
	EQ(f->count, 5);
	EQ(f->total_ns, 10 * MS);
	EQ(f->lost_ns, 10 * MS);
	EQ(f->max_ns, 2 * MS);
	EQ(f->start, T0 + 10 * MS + 100 * US);
	EQ(f->end, T0 + 50 * MS + 2100 * US);
	EQ(f->threads, 1);
	EQ(f->nbursts, 1);                   /* 8 ms apart: one burst */
	f = an_nth(&r, FT_FK_HIDDEN, 1);
	STREQ(f->site, "train.py:50 in free");
	STREQ(f->symbol, "cuMemFree_v2");
	EQ(f->count, 3);
	EQ(f->total_ns, 1500 * US);
	EQ(f->max_ns, 500 * US);
	EQ(f->nbursts, 3);                   /* 19.5 ms apart: one each */
	f = an_nth(&r, FT_FK_HIDDEN, 2);
	STREQ(f->site, "");
	STREQ(f->symbol, "cuMemcpyHtoD_v2");
	EQ(f->tid, 100);
	EQ(f->count, 2);
	EQ(f->total_ns, 400 * US);
	EQ(f->max_ns, 300 * US);
	f = an_nth(&r, FT_FK_HIDDEN, 3);
	STREQ(f->site, "");
	EQ(f->tid, 101);
	EQ(f->count, 1);
	EQ(f->total_ns, 200 * US);
	an_free(&r);
}

/* Five steps 10 ms apart: a launch, then a 2 ms synchronous copy that
 * drains the stream, then untraced CPU work until the next step. The GPU
 * is busy 2.1 ms of each step and idles 7.9 ms behind the copy, charged
 * to it (the thread's CPU time after a hidden sync). */
static void verdict(void)
{
	struct an_run r;
	an_init(&r, 100, "python3 train.py");
	for (int i = 0; i < 5; i++) {
		uint64_t t = T0 + 10 * MS + (uint64_t)i * 10 * MS;
		launch(&r, 100, t);
		copy(&r, 100, FT_EV_CU_MEMCPY_DTOH, "cuMemcpyDtoH_v2", t + 100 * US, 2 * MS,
		     "train.py:42 in step");
	}
	an_analyse(&r);
	EQ(an_count(&r, FT_FK_HIDDEN), 1);
	const struct ft_finding *f = an_nth(&r, FT_FK_HIDDEN, 0);
	EQ(f->gpu_idle_known, 1);
	EQ(f->gpu_idle_ns, 4 * 7900 * US);   /* none after the last: the window ends */
	/* the window: first launch to the GPU's last known work */
	EQ(r.v.win_start, T0 + 10 * MS);
	EQ(r.v.win_end, T0 + 52100 * US);
	EQ(r.v.busy_ns, 5 * 2100 * US);
	EQ(r.v.idle_ns, 4 * 7900 * US);
	EQ(r.v.idle_by_feed[FT_CAT_HIDDEN], 4 * 7900 * US);
	EQ(r.v.t[FT_CAT_HIDDEN], 10 * MS);
	EQ(r.v.t[FT_CAT_SUBMIT], 50 * US);
	EQ(r.v.basis, FT_BASIS_GPU_IDLE);
	EQ(r.v.limit, FT_LIMIT_SYNC);
	EQ(r.v.nfeeders, 1);
	EQ(r.v.feeder[0], 100);
	an_free(&r);
}

int main(void)
{
	groups();
	verdict();
	return an_done("an_hidden");
}
