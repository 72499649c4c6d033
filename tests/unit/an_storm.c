/*
 * tests/unit/an_storm.c: small-read storms (docs/ANALYSES.md, "Small-read
 * storms"): a storm's reads, bytes, files, sizes, top files, the reads
 * 1 MiB reads would have needed (a file opened again: another pass), the
 * Python site that opened its files; module reads and large reads kept
 * out; a burst under the threshold handed on as a candidate; one under
 * FT_STORM_CANDIDATE reads, nothing.
 */
#include <stdio.h>
#include <string.h>

#include "an.h"

static void open_(struct an_run *r, int fd, const char *path, const char *py, uint64_t t)
{
	an_ev(r, 100, FT_EV_OPEN, t, 20 * US, "fd", (uint64_t)fd, "path", S(path), "py", S(py),
	      NULL);
}

static void read_(struct an_run *r, int fd, const char *path, uint64_t req, uint64_t t)
{
	an_ev(r, 100, FT_EV_READ, t, 50 * US, "fd", (uint64_t)fd, "path", S(path), "req", req,
	      "ret", req, NULL);
}

int main(void)
{
	struct an_run r;
	char path[12][24];
	an_init(&r, 100, "python3 train.py");
	for (int k = 0; k < 12; k++) {
		snprintf(path[k], sizeof path[k], "/data/f%d", k);
		open_(&r, 10 + k, path[k], "ds.py:7 in __getitem__", T0 + 99 * MS);
	}
	/* the storm: 1,200 reads of 4 KiB, 500 us apart, 100 per file; then
	 * /data/f0 opened again (another pass) and read 100 times more */
	for (int i = 0; i < 1200; i++)
		read_(&r, 10 + i % 12, path[i % 12], 4096, T0 + 100 * MS + (uint64_t)i * 500 * US);
	open_(&r, 30, path[0], "ds.py:9 in reload", T0 + 700 * MS);
	for (int i = 0; i < 100; i++)
		read_(&r, 30, path[0], 4096, T0 + 701 * MS + (uint64_t)i * 500 * US);
	/* within it: module imports' small reads and one large read, not
	 * part of it */
	for (int j = 0; j < 30; j++)
		read_(&r, 5, "/usr/lib/python3/dist-packages/m.py", 4096,
		      T0 + 100 * MS + 250 * US + (uint64_t)j * 10 * MS);
	read_(&r, 6, "/data/big", 1 << 20, T0 + 400 * MS + 250 * US);
	/* 2 s on: 150 reads of 512 bytes 10 ms apart (100 in any second): a
	 * candidate; 5 s on: 50, too few to be one */
	for (int i = 0; i < 150; i++)
		read_(&r, 40, "/data/g", 512, T0 + 2000 * MS + (uint64_t)i * 10 * MS);
	for (int i = 0; i < 50; i++)
		read_(&r, 41, "/data/h", 512, T0 + 5000 * MS + (uint64_t)i * 10 * MS);
	an_analyse(&r);

	EQ(r.m.reads, 1300 + 30 + 1 + 150 + 50);
	EQ(r.m.small_reads, 1300 + 150 + 50);
	EQ(r.m.small_read_bytes, 1300 * 4096 + 200 * 512);
	EQ(r.m.read_bytes, 1330 * 4096 + (1 << 20) + 200 * 512);
	EQ(r.m.module_reads, 30);
	EQ(r.m.storms, 1);
	EQ(an_count(&r, FT_FK_STORM), 2);

	const struct ft_finding *f = an_nth(&r, FT_FK_STORM, 0);
	EQ(f->candidate, 0);
	EQ(f->reads, 1300);
	EQ(f->bytes, 1300 * 4096);
	EQ(f->files, 12);
	EQ(f->lost_ns, 1300 * 50 * US);
	EQ(f->start, T0 + 100 * MS);
	EQ(f->end, T0 + 701 * MS + 99 * 500 * US + 50 * US);
	EQ(f->hist[3], 1300);                /* 4 KiB: "<16K" */
	EQ(f->hist[2] + f->hist[4], 0);
	/* /data/f0: 2 passes of 400 KiB; the 11 others one pass each */
	EQ(f->reads_needed, 2 + 11);
	EQ(f->ntop, 5);
	STREQ(f->top_file[0], "/data/f0");
	EQ(f->top_reads[0], 200);
	EQ(f->top_reads[4], 100);
	STREQ(f->opener, "ds.py:7 in __getitem__");
	EQ(f->opener_reads, 1200);
	EQ(f->tid, 100);

	f = an_nth(&r, FT_FK_STORM, 1);
	EQ(f->candidate, 1);
	EQ(f->reads, 150);
	EQ(f->bytes, 150 * 512);
	EQ(f->files, 1);
	EQ(f->hist[1], 150);                 /* 512 bytes: "<1K" */
	EQ(f->reads_needed, 1);
	EQ(f->start, T0 + 2000 * MS);
	an_free(&r);

	/* the same 150 reads are a storm when 100 in a second are enough */
	an_init(&r, 100, "python3 train.py");
	r.o.storm_reads = 100;
	for (int i = 0; i < 150; i++)
		read_(&r, 40, "/data/g", 512, T0 + 2000 * MS + (uint64_t)i * 10 * MS);
	an_analyse(&r);
	EQ(r.m.storms, 1);
	EQ(an_count(&r, FT_FK_STORM), 1);
	EQ(an_nth(&r, FT_FK_STORM, 0)->candidate, 0);
	an_free(&r);

	/* ... and 101 needed in a second: 100 reads 10 ms apart span 990 ms */
	an_init(&r, 100, "python3 train.py");
	r.o.storm_reads = 101;
	for (int i = 0; i < 150; i++)
		read_(&r, 40, "/data/g", 512, T0 + 2000 * MS + (uint64_t)i * 10 * MS);
	an_analyse(&r);
	EQ(r.m.storms, 0);
	EQ(an_nth(&r, FT_FK_STORM, 0)->candidate, 1);
	an_free(&r);
	return an_done("an_storm");
}
