/*
 * tests/unit/an_gaps.c: launch gaps (docs/ANALYSES.md, "Launch gaps") on
 * one thread feeding one stream: a gap after a submission, split by what
 * the thread did in it; a gap after a drain (after_sync); a pause under
 * --gap-ms that is none; what the metrics count.
 */
#include <string.h>

#include "an.h"

#define STREAM 0x10

static void launch(struct an_run *r, uint64_t t)
{
	an_ev(r, 100, FT_EV_CU_LAUNCH_KERNEL, t, 10 * US, "sym", S("cuLaunchKernel"),
	      "kernel", S("k"), "sync", (uint64_t)FT_SYNC_SUBMIT, "stream", (uint64_t)STREAM, NULL);
}

int main(void)
{
	struct an_run r;
	an_init(&r, 100, "./prog");
	/* 10 ms: two launches 100 us apart (no gap); then a 3 ms file read;
	 * the next launch at 15 ms: a gap from the second launch's end */
	launch(&r, T0 + 10 * MS);
	launch(&r, T0 + 10 * MS + 100 * US);
	an_ev(&r, 100, FT_EV_READ, T0 + 11 * MS, 3 * MS, "fd", (uint64_t)3, "path", S("/data/a"),
	      "req", (uint64_t)65536, "ret", (uint64_t)65536, NULL);
	launch(&r, T0 + 15 * MS);
	/* a sync drains the stream at 16 ms; a 3 ms semaphore wait that got
	 * data; the next launch at 20 ms: a gap from the drain */
	an_ev(&r, 100, FT_EV_CU_STREAM_SYNC, T0 + 15 * MS + 10 * US, 990 * US, "sym",
	      S("cuStreamSynchronize"), "sync", (uint64_t)FT_SYNC_WAIT, "stream", (uint64_t)STREAM,
	      NULL);
	an_ev(&r, 100, FT_EV_SEM_WAIT, T0 + 16 * MS + 500 * US, 3 * MS, "sem", (uint64_t)0x7000,
	      "ret", (uint64_t)0, NULL);
	launch(&r, T0 + 20 * MS);
	an_analyse(&r);

	EQ(r.m.launches, 4);
	EQ(r.m.submissions, 4);
	EQ(r.m.syncs, 1);
	EQ(r.m.sync_ns, 990 * US);
	EQ(an_count(&r, FT_FK_GAP), 2);      /* the thread's gaps are the stream's */
	EQ(r.m.gaps, 2);
	EQ(r.m.gap_ns, 15 * MS - (10 * MS + 110 * US) + 4 * MS);

	const struct ft_finding *g = an_nth(&r, FT_FK_GAP, 0);
	EQ(g->start, T0 + 10 * MS + 110 * US);
	EQ(g->end, T0 + 15 * MS);
	EQ(g->lost_ns, 4890 * US);
	EQ(g->scope, 0);
	EQ(g->stream, STREAM);
	EQ(g->after_sync, 0);
	EQ(g->tid, 100);
	EQ(g->attr[FT_CAT_IO], 3 * MS);
	EQ(g->attr[FT_CAT_CPU], 1890 * US);
	EQ(g->attr[FT_CAT_DATA], 0);
	EQ(g->cause, FT_CAT_IO);
	STREQ(g->next_call, "cuLaunchKernel");

	g = an_nth(&r, FT_FK_GAP, 1);
	EQ(g->start, T0 + 16 * MS);
	EQ(g->end, T0 + 20 * MS);
	EQ(g->lost_ns, 4 * MS);
	EQ(g->after_sync, 1);
	EQ(g->attr[FT_CAT_DATA], 3 * MS);
	EQ(g->attr[FT_CAT_CPU], 1 * MS);
	EQ(g->attr[FT_CAT_IO], 0);
	EQ(g->cause, FT_CAT_DATA);
	an_free(&r);

	/* other thresholds: 4.89 ms is a gap at 4.5 ms and at 4.89 ms (at
	 * least --gap-ms), none at 5 ms */
	for (int k = 0; k < 3; k++) {
		an_init(&r, 100, "./prog");
		r.o.gap_ns = k == 2 ? 5 * MS : k ? 4890 * US : 4500 * US;
		launch(&r, T0 + 10 * MS);
		launch(&r, T0 + 10 * MS + 100 * US);
		launch(&r, T0 + 15 * MS);
		an_analyse(&r);
		EQ(an_count(&r, FT_FK_GAP), k == 2 ? 0 : 1);
		EQ(r.m.gaps, k == 2 ? 0 : 1);
		an_free(&r);
	}
	return an_done("an_gaps");
}
