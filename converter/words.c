/*
 * words.c: the English of the model's decisions (words.h): the verdict's
 * sentence from what verdict.c decided (its say, its limit) and the
 * verdict's own figures. Shares are worded as whole percentages.
 */
#include <stdio.h>
#include <string.h>

#include "phases.h"
#include "words.h"

/* the end of a "locks" sentence into buf: when the feeding threads' lock
 * time is mostly waits for CPython's GIL, which lock and what to change */
static const char *gil_words(const struct ft_verdict *v, double wall, char *buf, size_t cap)
{
	if (!v->gil_ns || v->gil_ns * 2 < v->t[FT_CAT_LOCK])
		return ".";
	snprintf(buf, cap, ", %.0f%% for the Python GIL (other threads run Python meanwhile): "
		 "move their work into worker processes.", 100 * (double)v->gil_ns / wall);
	return buf;
}

void ft_words_verdict(const struct ft_verdict *v, char *out, size_t cap)
{
	double w = v->wall_ns ? (double)v->wall_ns : 1.0;
	double sh[FT_CAT_N];
	for (int c = 0; c < FT_CAT_N; c++)
		sh[c] = (double)v->t[c] / w;
	double data = sh[FT_CAT_IO] + sh[FT_CAT_DATA], sync = sh[FT_CAT_HIDDEN];
	double locks = sh[FT_CAT_LOCK], ranks = sh[FT_CAT_RANKS], gpu = sh[FT_CAT_GPU_WAIT];
	double win = v->win_end > v->win_start ? (double)(v->win_end - v->win_start) : 1.0;
	double idle = (double)v->idle_ns / win, held = (double)v->lock_union / win;
	const char *who = v->nfeeders > 1 ? "the feeding threads spend" : "the feeding thread spends";
	const char *how = v->gpu_measured ? " (measured)" : "";
	char gw[160];
	enum ft_limit own;
	*out = 0;
	switch (v->say) {
	case FT_SAY_UNSET:
		break;
	case FT_SAY_NOTHING:
		snprintf(out, cap, "No GPU work and no data feed was recorded: nothing to limit.");
		break;
	case FT_SAY_NOGPU_RANKS:
		snprintf(out, cap,
			 "No GPU work was recorded; the process waits for other ranks: %s "
			 "%.0f%% of the time in collectives and %.0f%% waiting for data. The "
			 "last rank to arrive sets the pace: with every rank traced, the Ranks "
			 "block names it.",
			 who, 100 * ranks, 100 * data);
		break;
	case FT_SAY_NOGPU_PHASES:
		ft_phases_verdict(v->phases, &own, out, cap);
		break;
	case FT_SAY_NOGPU_DATA:
		snprintf(out, cap,
			 "No GPU work was recorded; the process is limited by data delivery: "
			 "%s %.0f%% of the time waiting for data and %.0f%% in file I/O.",
			 who, 100 * sh[FT_CAT_DATA], 100 * sh[FT_CAT_IO]);
		break;
	case FT_SAY_NOGPU_LOCKS:
		snprintf(out, cap,
			 "No GPU work was recorded; the process is limited by locks: %s "
			 "%.0f%% of the time waiting on locks%s", who, 100 * locks,
			 gil_words(v, w, gw, sizeof gw));
		break;
	case FT_SAY_NOGPU_NONE:
		snprintf(out, cap,
			 "No GPU work was recorded and the data feed keeps up: the loop is the "
			 "limit (%s %.0f%% of the time waiting for data).", who, 100 * data);
		break;
	case FT_SAY_LOCK_TURNS:
		snprintf(out, cap,
			 "The GPU feed is limited by locks: the launching threads take turns on a "
			 "lock (one of them waits %.0f%% of the loop; %s %.0f%% of the time "
			 "waiting on locks).", 100 * held, who, 100 * locks);
		break;
	case FT_SAY_STREAM_SYNCS:
		snprintf(out, cap,
			 "The GPU feed is limited by synchronization: each feeding thread's "
			 "stream idles %.0f%% of its time behind its syncs, though the device, "
			 "all streams together, is busy %.0f%% of the loop%s (kernels of different "
			 "streams overlap when they fit).", 100 * v->said_share, 100 * (1 - idle), how);
		break;
	case FT_SAY_GPU_BUSY:
		snprintf(out, cap,
			 "The GPU is the limit: it is busy %.0f%% of the loop%s and the feed keeps "
			 "up (%s %.0f%% of the time waiting for the GPU).", 100 * (1 - idle), how,
			 who, 100 * (gpu + sync));
		break;
	case FT_SAY_GPU_IDLE:
		snprintf(out, cap,
			 "The GPU feed is limited by %s: the GPU idles %.0f%% of the loop%s, and "
			 "the streams idle %.0f%% of their time because of it.", ft_limit_name(v->limit),
			 100 * idle, how, 100 * v->said_share);
		break;
	case FT_SAY_GPU_WAIT:
		snprintf(out, cap,
			 "The GPU is the limit: %s %.0f%% of the time waiting for the GPU and little "
			 "else.", who, 100 * gpu);
		break;
	case FT_SAY_DATA:
		snprintf(out, cap,
			 "The GPU feed is limited by data delivery: %s %.0f%% of the time waiting "
			 "for data and %.0f%% in file I/O.", who, 100 * sh[FT_CAT_DATA], 100 * sh[FT_CAT_IO]);
		break;
	case FT_SAY_SYNC:
		snprintf(out, cap,
			 "The GPU feed is limited by synchronization: %s %.0f%% of the time in "
			 "hidden syncs the program did not ask for.", who, 100 * sync);
		break;
	case FT_SAY_LOCKS:
		snprintf(out, cap,
			 "The GPU feed is limited by locks: %s %.0f%% of the time waiting on locks%s",
			 who, 100 * locks, gil_words(v, w, gw, sizeof gw));
		break;
	case FT_SAY_RANKS:
		snprintf(out, cap,
			 "The GPU feed waits for other ranks: %s %.0f%% of the time in collectives. "
			 "The last rank to arrive sets the pace: with every rank traced, the Ranks "
			 "block names it.",
			 who, 100 * ranks);
		break;
	case FT_SAY_SUBMISSION: {
		char rq[64] = "";
		if (sh[FT_CAT_RUNQ] >= 0.005)
			snprintf(rq, sizeof rq, " (and %.0f%% runnable, waiting for a core)",
				 100 * sh[FT_CAT_RUNQ]);
		snprintf(out, cap,
			 "The GPU feed is limited by work submission: %s %.0f%% of the time on the "
			 "CPU between launches%s and %.0f%% submitting, while the GPU waits for work.",
			 who, 100 * sh[FT_CAT_CPU], rq, 100 * sh[FT_CAT_SUBMIT]);
		break;
	}
	}
}
