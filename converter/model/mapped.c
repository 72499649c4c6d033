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
		snprintf(t->name, sizeof t->name, "%s", name ? name : "");
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
	m->said = m->faults >= FT_MAPPED_MIN_FAULTS;
}

void ft_mapped_free(struct ft_mapped *m)
{
	free(m->data);
	m->data = NULL;
}
