/*
 * flight.c: the flight recorder (FEEDTRACE_FLIGHT). Instead of the file,
 * the chunks go into memory: the chunks that define what records name
 * (strings, symbols, modules, thread names, the process) into a store
 * that only grows, the rest (events, samples, clock pairs) into a ring of
 * the last N seconds or N MiB, whose oldest chunks are dropped (counted,
 * outside the window: no loss). output.c writes them out when asked
 * (ft_output_flight_dump); the flusher asks on a request file in the run
 * directory (`feedtrace flight`) or a hang (no step for
 * FEEDTRACE_FLIGHT_HANG_S), lifecycle.c on a fatal signal and at the end.
 *
 * The memory is mapped by the flusher thread as it starts (never in a
 * hook), MAP_NORESERVE: pages come as chunks fill them. Everything here is
 * called holding the flush lock, and is async-signal-safe (raw system
 * calls, no allocation) except ft_flight_map.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "config.h"
#include "flight.h"
#include "internal.h"
#include "log.h"

struct ft_flight_cfg ft_flight;

/* Each chunk kept in the window ring: this, then the framed chunk (header
 * and payload as the file would hold them), padded to 8 bytes. */
struct kept {
	uint64_t ticks;                 /* when it was kept */
	uint64_t ns;                    /* the same, CLOCK_MONOTONIC */
	uint32_t len;                   /* framed bytes; WRAP: go on at 0 */
	uint32_t slots;                 /* an EVENTS chunk's slots */
};
#define WRAP 0xffffffffu
#define DEF_BYTES (128ull << 20)        /* the defining chunks' store */

static unsigned char *_Atomic mem;      /* DEF_BYTES, then the ring */
static uint64_t def_len, def_written;
static uint64_t ring_cap, head, tail, count;
static uint64_t from_ticks;             /* where the window starts: 0, the run's start */
static uint64_t dropped_chunks, dropped_slots, dropped_bytes, def_lost;
static uint32_t dumps;
static _Atomic int passing;             /* write straight to the file */
static char request_path[4200];
static uint64_t request_seen[2];        /* inode, mtime ns of the request served */
static uint64_t last_step_ns;           /* the flusher saw a step then; 0 none yet */
static int hang_dumped;

static void request_token(uint64_t tok[2]);

/* "60s", "64MiB", "512KiB", "60s,64MiB": *secs and *kib (0: not given);
 * -1 if bad */
static int parse(const char *v, uint32_t *secs, uint32_t *kib)
{
	*secs = *kib = 0;
	while (*v) {
		char *end;
		errno = 0;
		unsigned long n = strtoul(v, &end, 10);
		if (end == v || errno || n == 0 || n > 16384ul << 10)
			return -1;
		if (!strncmp(end, "s", 1) && (end[1] == 0 || end[1] == ',') && n <= 86400 * 7)
			*secs = (uint32_t)n, end += 1;
		else if (!strncmp(end, "MiB", 3) && (end[3] == 0 || end[3] == ',') && n <= 16384)
			*kib = (uint32_t)n << 10, end += 3;
		else if (!strncmp(end, "KiB", 3) && (end[3] == 0 || end[3] == ',') && n >= 64)
			*kib = (uint32_t)n, end += 3;
		else
			return -1;
		v = *end == ',' ? end + 1 : end;
	}
	return *secs || *kib ? 0 : -1;
}

void ft_flight_config(void)
{
	memset(&ft_flight, 0, sizeof ft_flight);
	const char *v = getenv("FEEDTRACE_FLIGHT");
	if (!v || !*v || !strcmp(v, "0"))
		return;
	uint32_t secs, kib;
	if (strlen(v) > 40 || parse(v, &secs, &kib) != 0) {
		ft_log("feedtrace: FEEDTRACE_FLIGHT=\"%.40s\" is not N s, N MiB (N KiB, 64 at "
		       "least) or both (60s, 64MiB, 60s,64MiB); recording everything to the file", v);
		return;
	}
	ft_flight.on = 1;
	ft_flight.keep_s = secs;
	ft_flight.hang_s = ft_cfg.flight_hang_s;
	ft_flight.at_exit = ft_cfg.flight_exit;
	ft_flight.keep_bytes = kib ? (uint64_t)kib << 10 : (uint64_t)FT_FLIGHT_DEFAULT_MIB << 20;
}

/* The flusher thread, as it starts: the store and the ring, once per
 * process (a fork child keeps its parent's mapping: ft_flight_after_fork_child). */
void ft_flight_map(void)
{
	if (!ft_flight.on || atomic_load(&mem))
		return;
	snprintf(request_path, sizeof request_path, "%s/" FT_FLIGHT_REQUEST_FILE, ft_cfg.out_dir);
	void *m = ft_map_anon(DEF_BYTES + ft_flight.keep_bytes, MAP_NORESERVE);
	if (!m) {
		ft_log("feedtrace: no memory for the flight recorder (%llu MiB); recording "
		       "everything to the file",
		       (unsigned long long)((DEF_BYTES + ft_flight.keep_bytes) >> 20));
		ft_flight.on = 0;
		return;
	}
	ring_cap = ft_flight.keep_bytes;
	request_token(request_seen);    /* a request made before this process is not for it */
	atomic_store(&mem, (unsigned char *)m);
}

void ft_flight_after_fork_child(void)
{
	def_len = def_written = head = tail = count = 0;
	from_ticks = dropped_chunks = dropped_slots = dropped_bytes = def_lost = 0;
	dumps = 0;
	passing = 1;                    /* until its file's start is written (lifecycle.c) */
	last_step_ns = 0;
	hang_dumped = 0;
}

static struct kept *at(uint64_t off)
{
	return (struct kept *)(atomic_load(&mem) + DEF_BYTES + off);
}

/* The oldest chunk kept (count > 0): past the end's wrap, if there. */
static struct kept *oldest(void)
{
	if (ring_cap - head < sizeof(struct kept) || at(head)->len == WRAP)
		head = 0;
	return at(head);
}

/* The oldest chunk of the window, dropped: the window starts after it. */
static void drop_oldest(void)
{
	struct kept *k = oldest();
	from_ticks = k->ticks;
	dropped_chunks++;
	dropped_slots += k->slots;
	dropped_bytes += k->len;
	head += (sizeof *k + k->len + 7) & ~7ull;
	if (--count == 0)
		head = tail = 0;
}

/* Where an entry of need bytes goes, or -1 when the ring has no room. */
static int64_t place(uint64_t need)
{
	if (!count)
		return need <= ring_cap ? 0 : -1;
	if (tail > head) {
		if (need <= ring_cap - tail)
			return (int64_t)tail;
		return need <= head ? 0 : -1;
	}
	return need <= head - tail ? (int64_t)tail : -1;
}

static int defining(unsigned type)
{
	return type == FT_CHUNK_STRINGS || type == FT_CHUNK_SYMBOLS || type == FT_CHUNK_MODULES ||
	       type == FT_CHUNK_THREAD || type == FT_CHUNK_PROCESS;
}

static void copy_iov(unsigned char *dst, const struct iovec *iov, int n)
{
	for (int i = 0; i < n; i++) {
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
}

int ft_flight_keep(const struct iovec *iov, int n, uint64_t bytes)
{
	unsigned char *m = atomic_load(&mem);
	if (!m || passing || !ft_flight.on)
		return 0;
	const struct ft_chunk_header *h = iov[0].iov_base;
	if (h->type == FT_CHUNK_END || h->type == FT_CHUNK_FLIGHT)
		return 0;
	if (defining(h->type)) {
		if (def_len + bytes > DEF_BYTES) {
			def_lost++;
			return 1;
		}
		copy_iov(m + def_len, iov, n);
		def_len += bytes;
		return 1;
	}
	uint64_t now_ns = ft_mono_ns();
	if (ft_flight.keep_s)
		while (count && oldest()->ns + (uint64_t)ft_flight.keep_s * 1000000000ull < now_ns)
			drop_oldest();
	uint64_t need = (sizeof(struct kept) + bytes + 7) & ~7ull;
	uint32_t slots = h->type == FT_CHUNK_EVENTS && h->raw_size >= sizeof(struct ft_events_prefix) ?
		(h->raw_size - (uint32_t)sizeof(struct ft_events_prefix)) / FT_SLOT_SIZE : 0;
	int64_t off;
	while ((off = place(need)) < 0 && count)
		drop_oldest();
	if (off < 0) {                  /* larger than the whole window */
		from_ticks = ft_now();
		dropped_chunks++;
		dropped_slots += slots;
		dropped_bytes += bytes;
		return 1;
	}
	if ((uint64_t)off < tail && ring_cap - tail >= sizeof(struct kept))
		at(tail)->len = WRAP;
	struct kept *k = at((uint64_t)off);
	k->ticks = ft_now();
	k->ns = now_ns;
	k->len = (uint32_t)bytes;
	k->slots = slots;
	copy_iov((unsigned char *)(k + 1), iov, n);
	tail = (uint64_t)off + need;
	count++;
	return 1;
}

void ft_flight_info(struct ft_flight_info *fi, int why, int detail)
{
	uint64_t now_ns = ft_mono_ns();
	if (ft_flight.keep_s && atomic_load(&mem))      /* the window ends now */
		while (count && oldest()->ns + (uint64_t)ft_flight.keep_s * 1000000000ull < now_ns)
			drop_oldest();
	memset(fi, 0, sizeof *fi);
	fi->why = (uint32_t)why;
	fi->detail = detail;
	fi->seq = ++dumps;
	fi->keep_s = ft_flight.keep_s;
	fi->hang_s = ft_flight.hang_s;
	fi->keep_bytes = ft_flight.keep_bytes;
	fi->window_ticks = from_ticks;
	fi->dump_ticks = ft_now();
	fi->dropped_chunks = dropped_chunks;
	fi->dropped_slots = dropped_slots;
	fi->dropped_bytes = dropped_bytes;
	fi->def_lost = def_lost;
}

size_t ft_flight_next(uint64_t *cursor, const void **data)
{
	unsigned char *m = atomic_load(&mem);
	if (!m)
		return 0;
	if (*cursor == 0) {             /* first the defining chunks not yet written */
		*cursor = 1;
		if (def_len > def_written) {
			*data = m + def_written;
			size_t n = (size_t)(def_len - def_written);
			def_written = def_len;
			return n;
		}
	}
	if (!count)
		return 0;
	struct kept *k = oldest();
	*data = k + 1;
	size_t n = k->len;
	head += (sizeof *k + k->len + 7) & ~7ull;
	if (--count == 0)
		head = tail = 0;
	return n;
}

void ft_flight_dumped(void)
{
	from_ticks = ft_now();          /* the next dump's window starts here */
}

void ft_flight_pass(int on)
{
	passing = on;
}

/* ---- steps: the hang detector's clock ---- */

static int step_name(uint32_t id)
{
	static uint32_t yes, no;
	if (!id || id == no)
		return 0;
	if (id == yes)
		return 1;
	const struct ft_string_entry *e = ft_strtab_entry(id);
	if (!e)
		return 0;
	const char *s = (const char *)(e + 1);
	int r = !strncmp(s, "feedtrace:next ", 15) || !strncmp(s, "feedtrace:optimizer.step", 24) ||
		!strncasecmp(s, "step", 4);
	*(r ? &yes : &no) = id;
	return r;
}

void ft_flight_scan(const struct ft_rec *recs, uint64_t n)
{
	if (!ft_flight.on || !ft_flight.hang_s)
		return;
	for (uint64_t i = 0; i < n;) {
		const struct ft_rec *r = &recs[i];
		uint32_t name = r->kind == FT_EV_RANGE_PUSH || r->kind == FT_EV_MARK ? r->p.u32[0] :
				r->kind == FT_EV_RANGE_START ? r->p.u32[2] : 0;
		if (name && step_name(name)) {
			last_step_ns = ft_mono_ns();
			hang_dumped = 0;
		}
		i += r->nslots ? r->nslots : 1;
	}
}

/* ---- the request file ---- */

static void request_token(uint64_t tok[2])
{
	struct stat st;
	tok[0] = tok[1] = 0;
	if (request_path[0] && syscall(SYS_newfstatat, AT_FDCWD, request_path, &st, 0) == 0) {
		tok[0] = (uint64_t)st.st_ino;
		tok[1] = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	}
}

/* Writes the request file as `feedtrace flight` does (a new file renamed
 * over the old: every process sees a new inode), naming why and who. */
static void request_all(const char *why)
{
	char tmp[4300], line[64];
	int pid = (int)syscall(SYS_getpid);
	snprintf(tmp, sizeof tmp, "%s.%d", request_path, pid);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, tmp,
			      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	int n = snprintf(line, sizeof line, "%s %d\n", why, pid);
	syscall(SYS_write, fd, line, (size_t)n);
	syscall(SYS_close, fd);
	if (syscall(SYS_renameat, AT_FDCWD, tmp, AT_FDCWD, request_path) != 0)
		syscall(SYS_unlinkat, AT_FDCWD, tmp, 0);
	request_token(request_seen);    /* our own: not served again */
}

int ft_flight_poll(int *detail)
{
	if (!ft_flight.on || !atomic_load(&mem) || passing)
		return 0;
	uint64_t tok[2];
	request_token(tok);
	if (tok[0] && (tok[0] != request_seen[0] || tok[1] != request_seen[1])) {
		request_seen[0] = tok[0];
		request_seen[1] = tok[1];
		char line[64] = "";
		int fd = (int)syscall(SYS_openat, AT_FDCWD, request_path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			long r = syscall(SYS_read, fd, line, sizeof line - 1);
			line[r > 0 ? r : 0] = 0;
			syscall(SYS_close, fd);
		}
		const char *sp = strchr(line, ' ');
		*detail = sp ? atoi(sp + 1) : 0;
		return !strncmp(line, "hang ", 5) ? FT_FLIGHT_HANG : FT_FLIGHT_REQUEST;
	}
	if (ft_flight.hang_s && last_step_ns && !hang_dumped &&
	    ft_mono_ns() - last_step_ns > (uint64_t)ft_flight.hang_s * 1000000000ull) {
		hang_dumped = 1;
		request_all("hang");    /* the run's other processes: their window too */
		*detail = (int)syscall(SYS_getpid);
		return FT_FLIGHT_HANG;
	}
	return 0;
}
