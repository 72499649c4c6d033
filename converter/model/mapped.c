/*
 * mapped.c: data read through memory maps (numpy.memmap, Arrow, LMDB):
 * there a loader's I/O is page faults, which no call shows. The recorder
 * samples the process's major faults once it mapped a regular file
 * (libfeedtrace/faults.c, FAULTS chunks); here the processes that
 * did, or whose ancestor did (a DataLoader worker inherits the main
 * process's maps), give the run's faults on mapped data and the files
 * (their mmap records: readable mappings of files that are not code).
 * Only processes that took faults, and their ancestors, are read again
 * for their mmap records. Workers are named as processes; in another
 * process where several threads took faults (the recorder's samples of
 * each thread), those threads by name. docs/ANALYSES.md, "Mapped data".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mapped.h"
#include "events.h"
#include "report_model.h"
#include "util.h"
#include "modpath.h"

struct scan {
	const struct ft_process *p;
	struct ft_mapped *m;
	const struct ft_field *path, *prot, *addr;
	int found;
};

static void add_file(struct ft_mapped *m, const char *path)
{
	for (int i = 0; i < m->nfiles; i++)
		if (!strcmp(m->files[i], path))
			return;
	if (m->nfiles == FT_MAPPED_FILES) {
		m->more_files++;
		return;
	}
	snprintf(m->files[m->nfiles++], sizeof m->files[0], "%s", path);
}

static int on_event(const struct ft_event *ev, void *arg)
{
	struct scan *s = arg;
	const struct ft_rec *r = ev->rec;
	if (r->kind != FT_EV_MMAP)
		return 0;
	if (!(ft_field_raw(r, s->prot) & PROT_READ) ||
	    ft_field_raw(r, s->addr) == (uint64_t)(uintptr_t)MAP_FAILED)
		return 0;
	const char *path = ft_string(s->p, (uint32_t)ft_field_raw(r, s->path));
	if (!path || !*path || ft_is_module_path(path))
		return 0;
	add_file(s->m, path);
	s->found = 1;
	return 0;
}

/* process i's threads that took faults, when more than one did: into
 * m's list, which keeps the ones with the most */
static void add_threads(struct ft_mapped *m, const struct ft_report *r, int i)
{
	const struct ft_process *p = r->tr.procs[i];
	int faulted = 0;
	uint64_t n, ns;
	for (int k = 0; k < p->nfaults; k++)
		faulted += p->faults[k].tid &&
			   ft_thread_faults(p, p->faults[k].tid, 0, UINT64_MAX, &n, &ns) && n;
	if (faulted < 2)
		return;
	for (int k = 0; k < p->nfaults; k++) {
		int32_t tid = p->faults[k].tid;
		if (!tid || !ft_thread_faults(p, tid, 0, UINT64_MAX, &n, &ns) || !n)
			continue;
		int at = m->nthreads;
		while (at > 0 && m->threads[at - 1].faults < n)
			at--;
		if (at == FT_MAPPED_THREADS) {
			m->more_threads++;
			continue;
		}
		if (m->nthreads == FT_MAPPED_THREADS)
			m->more_threads++;
		else
			m->nthreads++;
		memmove(&m->threads[at + 1], &m->threads[at],
			(size_t)(m->nthreads - 1 - at) * sizeof m->threads[0]);
		struct ft_mapped_thread *t = &m->threads[at];
		const char *name = ft_thread_name(p, tid);
		t->pid = r->procs[i].pid;
		t->tid = tid;
		t->faults = n;
		if (name && *name)
			snprintf(t->name, sizeof t->name, "%s", name);
		else
			snprintf(t->name, sizeof t->name, "thread %d", tid);
	}
}

void ft_mapped_build(struct ft_report *r)
{
	struct ft_mapped *m = &r->mapped;
	memset(m, 0, sizeof *m);
	if (!r->nprocs)
		return;
	m->data = ft_xcalloc((size_t)r->nprocs, 1);
	const struct ft_kind_info *ki = ft_kind(FT_EV_MMAP);
	struct scan s = { .m = m, .path = ft_kind_field(ki, "path"),
			  .prot = ft_kind_field(ki, "prot"), .addr = ft_kind_field(ki, "addr") };
	/* read again only a process that took faults, or an ancestor of one
	 * (whose maps it may have inherited) */
	unsigned char *need = ft_xcalloc((size_t)r->nprocs, 1);
	for (int i = 0; i < r->nprocs; i++) {
		uint64_t n, ns;
		if (!ft_thread_faults(r->tr.procs[i], 0, 0, UINT64_MAX, &n, &ns) || !n)
			continue;
		need[i] = 1;
		for (int a = r->procs[i].parent, hops = 0; a >= 0 && hops < r->nprocs;
		     a = r->procs[a].parent, hops++)
			need[a] = 1;
	}
	for (int i = 0; i < r->nprocs; i++) {
		struct ft_process *p = r->tr.procs[i];
		if (!need[i] || !p->nfaults || !s.path || !s.prot || !s.addr)
			continue;
		s.p = p;
		s.found = 0;
		ft_process_events(p, on_event, &s, NULL);
		m->data[i] = (unsigned char)s.found;
	}
	free(need);
	/* a process inherits its ancestors' maps (processes come parents first
	 * or not: follow each one's chain) */
	for (int i = 0; i < r->nprocs; i++) {
		const struct ft_process *p = r->tr.procs[i];
		int d = m->data[i];
		for (int a = r->procs[i].parent, hops = 0; !d && a >= 0 && hops < r->nprocs;
		     a = r->procs[a].parent, hops++)
			d = m->data[a] == 1;
		uint64_t n, ns;
		if (!d || !ft_thread_faults(p, 0, 0, UINT64_MAX, &n, &ns) || !n)
			continue;
		m->faults += n;
		m->timed |= ft_fault_wait(p, 0, 0, UINT64_MAX, &ns);
		m->blkio_ns += ns;
		m->nprocs++;
		m->nworkers += r->procs[i].role == FT_ROLE_WORKER;
		m->main_too |= i == r->main;
		if (r->procs[i].role != FT_ROLE_WORKER)
			add_threads(m, r, i);
	}
}

void ft_mapped_free(struct ft_mapped *m)
{
	free(m->data);
	m->data = NULL;
}

void ft_mapped_who(const struct ft_mapped *m, char *out, size_t cap)
{
	if (m->nprocs == 1 && m->main_too)
		snprintf(out, cap, "the main process");
	else if (m->nworkers == m->nprocs)
		snprintf(out, cap, m->nworkers == 1 ? "the worker" : "the %d workers", m->nworkers);
	else
		snprintf(out, cap, "%d processes", m->nprocs);
}

void ft_mapped_files_text(const struct ft_mapped *m, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	for (int i = 0; i < m->nfiles && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%s",
				      i == 0 ? "" : i + 1 == m->nfiles && !m->more_files ? " and " : ", ",
				      m->files[i]);
	if (m->more_files && n < cap)
		snprintf(out + n, cap - n, " and %d more", m->more_files);
}

void ft_mapped_threads_text(const struct ft_mapped *m, char *out, size_t cap)
{
	size_t n = 0;
	out[0] = 0;
	for (int i = 0; i < m->nthreads && n < cap; i++) {
		char c[32];
		ft_fmt_count(c, sizeof c, m->threads[i].faults);
		n += (size_t)snprintf(out + n, cap - n, "%s%s (%s)",
				      i == 0 ? "" : i + 1 == m->nthreads && !m->more_threads ? " and " : ", ",
				      m->threads[i].name, c);
	}
	if (m->more_threads && n < cap)
		snprintf(out + n, cap - n, " and %d more", m->more_threads);
}

void ft_mapped_sentence(const struct ft_mapped *m, char *out, size_t cap)
{
	out[0] = 0;
	if (m->faults < FT_MAPPED_MIN_FAULTS)
		return;
	char who[48], n[32], files[600], wait[64] = "", ths[400] = "", in[420] = "";
	ft_mapped_who(m, who, sizeof who);
	ft_fmt_count(n, sizeof n, m->faults);
	ft_mapped_files_text(m, files, sizeof files);
	if (m->timed) {
		char t[32];
		ft_fmt_ns(t, sizeof t, m->blkio_ns);
		snprintf(wait, sizeof wait, ", waiting %s for block I/O", t);
	}
	ft_mapped_threads_text(m, ths, sizeof ths);
	if (*ths)
		snprintf(in, sizeof in, ", in threads %s", ths);
	snprintf(out, cap, "%s took %s major page faults on mapped data (%s)%s%s: the data "
		 "set is read from disk through memory maps, a fault at a time, in no traced "
		 "call. Keep it in the page cache (memory enough for it, read once before "
		 "training), read it in contiguous runs rather than scattered samples "
		 "(contiguous indices, madvise(MADV_WILLNEED or MADV_SEQUENTIAL)), or move it "
		 "to a faster local disk.", who, n, files, in, wait);
	if (out[0] >= 'a' && out[0] <= 'z')
		out[0] = (char)(out[0] - 'a' + 'A');
}
