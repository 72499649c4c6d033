/*
 * roles.c: the main process, its workers and helpers (roles.h). The main
 * process is the one chosen (a job's straggler rank, ranks.c), else the
 * one that launches most kernels; without kernels, the
 * process nearest the root that received batches (most batches on a tie);
 * without either, the first root process. A child of the main process is
 * a worker when it runs the same program (forked) or is a multiprocessing
 * child; the other ranks' main processes are ranks, and their children
 * are workers by the same rule; others (sh, resource trackers, anything
 * exec'd) are helpers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "reader.h"
#include "roles.h"
#include "util.h"

void ft_thread_label(const struct ft_process *p, int32_t tid, char *out, size_t cap)
{
	const char *name = ft_thread_name(p, tid);
	const char *cmd = *p->cmdline ? p->cmdline : p->exe;
	if (tid == p->hdr.pid && ft_is_python(cmd)) {
		/* the kernel's name a process starts with: its program's base
		 * name, 15 bytes at most */
		const char *end = cmd + strcspn(cmd, " "), *base = cmd;
		for (const char *q = cmd; q < end; q++)
			if (*q == '/')
				base = q + 1;
		size_t n = (size_t)(end - base) < 15 ? (size_t)(end - base) : 15;
		if (strlen(name) == n && !strncmp(name, base, n))
			name = "MainThread";
	}
	if (*name)
		snprintf(out, cap, "%s", name);
	else
		snprintf(out, cap, "thread %d", tid);
}

int ft_role_depth(const struct ft_role_proc *p, int n, int i)
{
	int d = 0;
	while (p[i].parent >= 0 && d < n)
		i = p[i].parent, d++;
	return d;
}

/* "rank 1/4" (its length), or "" (0) when rank is not one of world */
int ft_rank_words(int32_t rank, int32_t world, char *out, size_t cap)
{
	if (world <= 0 || rank < 0 || rank >= world) {
		if (cap)
			*out = 0;
		return 0;
	}
	int k = snprintf(out, cap, "rank %d/%d", rank, world);
	return k > 0 && (size_t)k < cap ? k : 0;
}

/* indices sorted by pid, then start, then index: one pid's images are
 * contiguous (bsearch by pid) */
static int by_pid_start(const void *x, const void *y, void *arg)
{
	const struct ft_role_proc *p = arg;
	int i = *(const int *)x, k = *(const int *)y;
	if (p[i].pid != p[k].pid)
		return p[i].pid < p[k].pid ? -1 : 1;
	if (p[i].start != p[k].start)
		return p[i].start < p[k].start ? -1 : 1;
	return (i > k) - (i < k);
}

static int *by_pid(const struct ft_role_proc *p, int n)
{
	int *o = ft_xmalloc(((size_t)n + 1) * sizeof *o);
	for (int i = 0; i < n; i++)
		o[i] = i;
	qsort_r(o, (size_t)n, sizeof *o, by_pid_start, (void *)p);
	return o;
}

/* the first place in o (sorted by by_pid) of pid's images, n if none */
static int pid_first(const struct ft_role_proc *p, const int *o, int n, int32_t pid)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (p[o[mid]].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* a parent pid may have several images (exec: `timeout 300 python3
 * train.py` is timeout, then python3, in one pid): the parent is the image
 * that had started last when the child started (the first of them by
 * index on a tie), or, none had, the one that started first */
static void parents(struct ft_role_proc *p, int n, const int *o)
{
	for (int i = 0; i < n; i++) {
		struct ft_role_proc *c = &p[i];
		c->parent = -1;
		for (int j = pid_first(p, o, n, c->ppid); j < n && p[o[j]].pid == c->ppid; j++) {
			int k = o[j];
			const struct ft_role_proc *q = &p[k];
			if (k == i)
				continue;
			int before = q->start <= c->start;
			const struct ft_role_proc *b = c->parent >= 0 ? &p[c->parent] : NULL;
			int bbefore = b && b->start <= c->start;
			if (!b || (before && (!bbefore || q->start > b->start)) ||
			    (!before && !bbefore && q->start < b->start))
				c->parent = k;
		}
	}
}

static int pick_main(const struct ft_role_proc *p, int n)
{
	int best = -1;
	for (int i = 0; i < n; i++)
		if (p[i].chosen)
			return i;
	for (int i = 0; i < n; i++) {
		const struct ft_role_proc *b = best >= 0 ? &p[best] : NULL;
		if (p[i].launches && (!b || p[i].launches > b->launches ||
				      (p[i].launches == b->launches && p[i].events > b->events)))
			best = i;
	}
	if (best >= 0)
		return best;
	for (int i = 0; i < n; i++) {
		if (!p[i].batches)
			continue;
		int di = ft_role_depth(p, n, i), db = best >= 0 ? ft_role_depth(p, n, best) : 0;
		if (best < 0 || di < db || (di == db && p[i].batches > p[best].batches))
			best = i;
	}
	if (best >= 0)
		return best;
	best = 0;
	for (int i = 1; i < n; i++) {
		int di = ft_role_depth(p, n, i), db = ft_role_depth(p, n, best);
		if (di < db || (di == db && p[i].start < p[best].start))
			best = i;
	}
	return best;
}

/* the root of its rank's processes: its parent (if traced) is of no rank
 * or of another (a DataLoader worker's parent is of its rank) */
static int rank_root(const struct ft_role_proc *p, int i)
{
	int q = p[i].parent;
	return q < 0 || p[q].rank != p[i].rank || p[q].world != p[i].world;
}

/* p[k] before p[i] as its rank's main: more launches, then (a job on the
 * CPU) the root of the rank's processes, then more batches received, then
 * more events, then first */
static int rank_before(const struct ft_role_proc *p, int k, int i)
{
	if (p[k].launches != p[i].launches)
		return p[k].launches > p[i].launches;
	if (rank_root(p, k) != rank_root(p, i))
		return rank_root(p, k);
	if (p[k].batches != p[i].batches)
		return p[k].batches > p[i].batches;
	if (p[k].events != p[i].events)
		return p[k].events > p[i].events;
	return k < i;
}

/* process i is its rank's main: of the processes of its rank (its workers
 * inherit it), the one that launches most kernels, or on the CPU the one
 * its workers are children of */
static int rank_main(const struct ft_role_proc *p, int n, int i)
{
	if (p[i].world < 2 || p[i].rank < 0 || p[i].rank >= p[i].world ||
	    (!p[i].launches && !p[i].batches))
		return 0;
	for (int k = 0; k < n; k++)
		if (k != i && p[k].rank == p[i].rank && p[k].world == p[i].world &&
		    rank_before(p, k, i))
			return 0;
	return 1;
}

static int worker_of(const struct ft_role_proc *c, const struct ft_role_proc *m)
{
	if (strstr(c->cmdline, "resource_tracker") || strstr(c->cmdline, "forkserver"))
		return 0;
	return !strcmp(c->cmdline, m->cmdline) || strstr(c->cmdline, "spawn_main") ||
	       strstr(c->cmdline, "multiprocessing-fork");
}

/* p[k]'s trace started before p[i]'s (the lower index on a tie) */
static int started_before(const struct ft_role_proc *p, int k, int i)
{
	return p[k].start < p[i].start || (p[k].start == p[i].start && k < i);
}

/* worker i's place among its parent's fork records (fork order, as
 * PyTorch numbers its DataLoader workers), -1 when the parent recorded
 * none of it (a child made otherwise: posix_spawn, clone; forks not
 * traced). Its trace's start is no substitute: a child starts its trace
 * in its own fork handler, and under load a later child may get there
 * first. A pid the parent forked more than once (reused after its first
 * child ended): its traces in start order take its forks in order; one
 * beyond them (the same child again, after an exec) takes the last. */
static int fork_place(const struct ft_role_proc *p, int n, const int *o, int i)
{
	const struct ft_role_proc *m = &p[p[i].parent];
	int nth = 0, at = -1;
	for (int j = pid_first(p, o, n, p[i].pid); j < n && p[o[j]].pid == p[i].pid; j++) {
		int k = o[j];
		nth += k != i && p[k].parent == p[i].parent && started_before(p, k, i);
	}
	for (int f = 0; f < m->nforked; f++)
		if (m->forked[f] == p[i].pid && (at = f, nth-- == 0))
			break;
	return at;
}

/* worker k is numbered before worker i (place: their fork places): the
 * forked ones first, in fork order; then the others, and one fork's
 * images, by start, then by index. Workers are numbered among their
 * parent's (the main process's, or another rank's main's). */
struct worker_order {
	const struct ft_role_proc *p;
	const int *place;
};

/* workers sorted by parent, then as numbered among its workers */
static int worker_cmp(const void *x, const void *y, void *arg)
{
	const struct worker_order *w = arg;
	const struct ft_role_proc *p = w->p;
	const int *place = w->place;
	int k = *(const int *)x, i = *(const int *)y;
	if (p[k].parent != p[i].parent)
		return p[k].parent < p[i].parent ? -1 : 1;
	if ((place[k] >= 0) != (place[i] >= 0))
		return place[k] >= 0 ? -1 : 1;
	if (place[k] != place[i])
		return place[k] < place[i] ? -1 : 1;
	return started_before(p, k, i) ? -1 : 1;
}

int ft_roles(struct ft_role_proc *p, int n)
{
	if (n <= 0)
		return -1;
	int *o = by_pid(p, n);
	parents(p, n, o);
	int m = pick_main(p, n);
	int *place = ft_xrealloc(NULL, (size_t)n * sizeof *place);
	for (int i = 0; i < n; i++)
		p[i].role = i == m ? FT_ROLE_MAIN : rank_main(p, n, i) && p[i].rank != p[m].rank
					  ? FT_ROLE_RANK : FT_ROLE_HELPER;
	/* the workers: of the main process, and of each other rank's main */
	for (int i = 0; i < n; i++) {
		int q = p[i].parent;
		if (q >= 0 && p[i].role == FT_ROLE_HELPER &&
		    (p[q].role == FT_ROLE_MAIN || p[q].role == FT_ROLE_RANK) &&
		    worker_of(&p[i], &p[q]))
			p[i].role = FT_ROLE_WORKER;
		p[i].worker_no = 0;
		place[i] = p[i].role == FT_ROLE_WORKER ? fork_place(p, n, o, i) : -1;
	}
	/* DataLoader workers: the parent and all its workers run Python */
	int *notpy = ft_xcalloc((size_t)n + 1, sizeof *notpy);
	for (int i = 0; i < n; i++)
		if (p[i].role == FT_ROLE_WORKER && !ft_is_python(p[i].cmdline))
			notpy[p[i].parent] = 1;
	for (int i = 0; i < n; i++)
		p[i].py_workers = p[i].role == FT_ROLE_WORKER && !notpy[p[i].parent] &&
				  ft_is_python(p[p[i].parent].cmdline);
	free(notpy);
	/* a worker's number: its place among its parent's workers, sorted */
	int nw = 0;
	for (int i = 0; i < n; i++)
		if (p[i].role == FT_ROLE_WORKER)
			o[nw++] = i;
	struct worker_order w = { p, place };
	qsort_r(o, (size_t)nw, sizeof *o, worker_cmp, &w);
	for (int j = 1; j < nw; j++)
		if (p[o[j]].parent == p[o[j - 1]].parent)
			p[o[j]].worker_no = p[o[j - 1]].worker_no + 1;
	free(place);
	free(o);
	return m;
}

void ft_brief_command(const char *cmdline, char *out, size_t cap)
{
	size_t o = 0;
	const char *s = cmdline;
	while (*s && o + 1 < cap) {
		size_t len = strcspn(s, " ");
		const char *w = s;
		if (*w != '-')
			for (const char *q = s; q < s + len; q++)
				if (*q == '/' && q + 1 < s + len)
					w = q + 1;
		size_t k = (size_t)(s + len - w);
		if (o && o + 1 < cap)
			out[o++] = ' ';
		if (o + k >= cap)
			k = cap - o - 1;
		memcpy(out + o, w, k);
		o += k;
		s += len;
		while (*s == ' ')
			s++;
	}
	out[o] = 0;
	if (o > 60)
		strcpy(out + 57, "...");
	for (char *p = out; *p; p++)    /* one line: `python3 -c` code's newlines */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = ' ';
}

void ft_role_name(const struct ft_role_proc *p, int n, int i, char *out, size_t cap)
{
	(void)n;
	char cmd[128];
	ft_brief_command(p[i].cmdline, cmd, sizeof cmd);
	int rk = ft_rank_words(p[i].rank, p[i].world, out, cap);    /* "rank 1/4 " first */
	if (rk > 0 && (size_t)rk + 1 < cap) {
		out[rk++] = ' ';
		out += rk, cap -= (size_t)rk;
	}
	if (p[i].role == FT_ROLE_WORKER) {
		snprintf(out, cap, "%sworker %d (pid %d)", p[i].py_workers ? "DataLoader " : "",
			 p[i].worker_no, p[i].pid);
	} else {
		/* another rank's main process: "rank 1/4 main: ..." */
		enum ft_proc_role said = p[i].role == FT_ROLE_RANK ? FT_ROLE_MAIN : p[i].role;
		snprintf(out, cap, "%s: %s", ft_proc_role_name(said), cmd);
	}
}

/* ---- rank identity (libfeedtrace/rank.c writes it in the header) ---- */

static const char *const launcher_name[] = {
	[FT_LAUNCH_NONE] = "none", [FT_LAUNCH_TORCH] = "torchrun", [FT_LAUNCH_MPI] = "mpi",
	[FT_LAUNCH_PMI] = "pmi", [FT_LAUNCH_SLURM] = "slurm", [FT_LAUNCH_GLOO] = "gloo",
};

int ft_rank_text(const struct ft_process *p, char *out, size_t cap)
{
	return ft_rank_words(p->hdr.rank, p->hdr.world_size, out, cap);
}

void ft_rank_json(struct ft_json *j, const struct ft_process *p)
{
	char t[32];
	if (!ft_rank_text(p, t, sizeof t)) {
		ft_json_null(j, "rank");
		return;
	}
	uint32_t l = p->hdr.launcher;
	char job[sizeof p->hdr.job + 1];
	memcpy(job, p->hdr.job, sizeof p->hdr.job);
	job[sizeof p->hdr.job] = 0;
	ft_json_obj(j, "rank");
	ft_json_int(j, "rank", p->hdr.rank);
	if (p->hdr.local_rank >= 0)
		ft_json_int(j, "local_rank", p->hdr.local_rank);
	else
		ft_json_null(j, "local_rank");
	ft_json_int(j, "world_size", p->hdr.world_size);
	ft_json_str(j, "launcher", l < sizeof launcher_name / sizeof launcher_name[0] &&
			launcher_name[l] ? launcher_name[l] : "unknown");
	ft_json_str(j, "job", job);
	ft_json_end(j);
}
