/*
 * capture.c: when a process records (FEEDTRACE_CAPTURE, `feedtrace
 * capture`). Owns the capture gate: the recording groups in ft_active are
 * set only inside a window, while FT_G_KEEP and FT_G_FD stay set for as
 * long as the library is on, so that threads, their names and the
 * descriptors' paths and kinds are kept while nothing is recorded. A
 * hook's only cost while idle is the load and branch of ft_enter.
 *
 * Windows start and stop at step boundaries (the user's "step" ranges,
 * else optimizer steps, else DataLoader batches: what shim/nvtx.c hands
 * ft_capture_push/pop/mark), after a delay (time:), or on a request that
 * `feedtrace capture` writes in the run directory and the flusher looks
 * for every cycle (ft_capture_tick; no signal). A forked child (a
 * DataLoader worker) without steps of its own follows the window of the
 * process that counts steps, through a page shared across fork (the
 * board). Each start and stop is a mark the flusher writes as a WINDOW
 * chunk (format.h). docs/ARCHITECTURE.md, "Capture windows".
 *
 * The program's threads call the step entry points and a follower's
 * check: no lock, no allocation (CAS and stores; a window's stop wakes the
 * flusher, errno kept). The flusher calls everything else.
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

#include "capture.h"
#include "config.h"
#include "internal.h"
#include "log.h"

enum mode { MODE_ON, MODE_OFF, MODE_STEPS, MODE_TIME };

static struct {
	int mode;
	uint64_t a, b, every;            /* steps a..b, again every `every` steps (0: once) */
	uint64_t delay_ns, dur_ns;       /* time: start after delay, for dur (0: to the end) */
} spec;

/* Shared with forked children (MAP_SHARED): the process that counts steps
 * says whether its window is open. A new image (exec) makes its own. */
struct board {
	_Atomic int32_t leader;          /* pid of the first process to see a step; 0 none */
	_Atomic uint32_t on;             /* the leader's window is open */
	_Atomic uint64_t step;           /* its current step */
	uint64_t t0_ns;                  /* CLOCK_MONOTONIC at the image's start */
};
static struct board *board;
static struct board board_local;        /* when the shared page cannot be had */

static _Atomic unsigned on_mask;       /* 0: capture always on, no gate */
static unsigned idle_mask;
static _Atomic int capturing;           /* 0 idle, 1 capturing, 2 changing */
static _Atomic int ever;                /* a window opened (or capture always on) */
static uint32_t win_seq;
static unsigned win_reason, win_unit;
static uint32_t win_demand;
static _Atomic uint64_t win_last;       /* the window's last step (0: not step-bounded) */

/* steps as this process sees them */
static _Atomic int unit;                /* enum ft_window_unit of the steps counted */
static _Atomic uint64_t nstep[4];       /* steps begun, per unit */
static __thread int step_level FT_TLS = -1;   /* the open step range's push level */
static _Atomic uint64_t first_step_ns;  /* when the first step began (flusher: step length) */

/* DataLoader workers fetch ahead of the step that uses their batch (two
 * batches each, PyTorch's prefetch_factor, and one for the follower's
 * look): the leader opens its followers' window that many steps before
 * its own */
static _Atomic uint64_t lead_steps;

/* flusher's */
static uint64_t stop_at_ns;             /* a timed window's end */
static int time_done;
static _Atomic int following;           /* the window is the leader's */
static struct { uint64_t ino, mtime, size; } req_seen;
static _Atomic uint32_t done_id;        /* a stepped request whose window ended: .done to write */
static uint32_t wait_done_id;           /* a request this process (no steps) records until .done */

/* a request to start at the first step >= target, ending at step last */
static _Atomic uint64_t armed_target, armed_last;
static _Atomic uint32_t armed_id;

/* the marks, for the flusher: a ring, each entry stamped by its index + 1 */
#define MARKS 256
static struct ft_window_mark marks[MARKS];
static _Atomic uint64_t mark_stamp[MARKS];
static _Atomic uint64_t marks_next;
static uint64_t marks_done;

static void push_mark(unsigned what, uint64_t step, uint64_t ticks)
{
	uint64_t i = atomic_fetch_add(&marks_next, 1);
	struct ft_window_mark *m = &marks[i % MARKS];
	m->seq = win_seq;
	m->what = (uint16_t)what;
	m->unit = (uint16_t)win_unit;
	m->reason = win_reason;
	m->demand = win_demand;
	m->step = step;
	m->ticks = ticks;
	atomic_store_explicit(&mark_stamp[i % MARKS], i + 1, memory_order_release);
}

size_t ft_capture_marks(struct ft_window_mark *out, size_t cap)
{
	size_t n = 0;
	while (n < cap && atomic_load_explicit(&mark_stamp[marks_done % MARKS],
					       memory_order_acquire) == marks_done + 1)
		out[n++] = marks[marks_done++ % MARKS];
	return n;
}

int ft_capture_ever(void)
{
	return atomic_load_explicit(&ever, memory_order_relaxed);
}

int ft_capture_on(void)
{
	return atomic_load_explicit(&capturing, memory_order_relaxed) == 1;
}

static int leading(void)
{
	return atomic_load(&board->leader) == ft_pid;
}

static int start(unsigned reason, unsigned u, uint64_t step, uint64_t last, uint32_t demand)
{
	int expect = 0;
	if (!atomic_compare_exchange_strong(&capturing, &expect, 2))
		return 0;
	uint64_t now = ft_now();
	unsigned idle = idle_mask;
	/* ft_active is 0 once the process commits its end: no window then */
	if (!atomic_compare_exchange_strong(&ft_active, &idle, atomic_load(&on_mask))) {
		atomic_store(&capturing, 0);
		return 0;
	}
	win_seq++;
	win_reason = reason;
	win_unit = u;
	win_demand = demand;
	atomic_store(&win_last, last);
	atomic_store(&ever, 1);
	push_mark(FT_WIN_START, step, now);
	if (u != FT_WIN_UNIT_NONE && leading()) {
		atomic_store(&board->step, step);
		atomic_store(&board->on, 1);
	}
	atomic_store(&capturing, 1);
	return 1;
}

static void stop(uint64_t step)
{
	int expect = 1;
	if (!atomic_compare_exchange_strong(&capturing, &expect, 2))
		return;
	unsigned on = atomic_load(&on_mask);
	atomic_compare_exchange_strong(&ft_active, &on, idle_mask);
	push_mark(FT_WIN_STOP, step, ft_now());
	if (win_unit != FT_WIN_UNIT_NONE && leading())
		atomic_store(&board->on, 0);
	if (win_reason == FT_WIN_DEMAND && win_unit != FT_WIN_UNIT_NONE)
		atomic_store(&done_id, win_demand);     /* the flusher writes its .done */
	atomic_store(&capturing, 0);
	ft_flusher_wake();
}

/* ---- step boundaries (program threads) ---- */

static int in_window(uint64_t n, uint64_t *last)
{
	if (spec.mode != MODE_STEPS || n < spec.a)
		return 0;
	uint64_t shift = spec.every ? (n - spec.a) / spec.every * spec.every : 0;
	if (n > spec.b + shift)
		return 0;
	*last = spec.b + shift;
	return 1;
}

static int opens_within(uint64_t n, uint64_t lead)
{
	uint64_t target = atomic_load(&armed_target);
	if (target && target > n && target <= n + lead)
		return 1;
	if (spec.mode != MODE_STEPS || n + lead < spec.a)
		return 0;
	if (n < spec.a)
		return 1;
	return spec.every && (n + lead - spec.a) / spec.every > (n - spec.a) / spec.every;
}

static void step_begin(unsigned u, uint64_t n)
{
	uint64_t last;
	if (atomic_load_explicit(&board->leader, memory_order_relaxed) == 0) {
		int32_t none = 0;
		atomic_compare_exchange_strong(&board->leader, &none, ft_pid);
	}
	if (leading()) {
		atomic_store_explicit(&board->step, n, memory_order_relaxed);
		if (atomic_load(&capturing) == 0 && opens_within(n, atomic_load(&lead_steps)))
			atomic_store(&board->on, 1);
	}
	if (!atomic_load_explicit(&first_step_ns, memory_order_relaxed))
		atomic_store_explicit(&first_step_ns, ft_mono_ns(), memory_order_relaxed);
	if (atomic_load(&capturing) != 0)
		return;
	if (in_window(n, &last)) {
		start(FT_WIN_STEPS, u, n, last, 0);
		return;
	}
	uint64_t target = atomic_load(&armed_target);
	if (target && n >= target) {
		uint64_t end = atomic_load(&armed_last);
		if (end < n)
			end = n + (end - target);
		if (start(FT_WIN_DEMAND, u, n, end, atomic_load(&armed_id)))
			atomic_store(&armed_target, 0);
	}
}

static void step_end(uint64_t n)
{
	if (atomic_load(&capturing) == 1 && win_unit != FT_WIN_UNIT_NONE &&
	    atomic_load(&win_last) == n)
		stop(n);
}

static int prefix(const char *s, const char *p)
{
	return s && strncmp(s, p, strlen(p)) == 0;
}

void ft_capture_push(const char *name, int level)
{
	if (!on_mask || !name)
		return;
	if (prefix(name, "feedtrace:next")) {
		const char *w = strstr(name, " workers=");
		uint64_t workers = 0;
		for (w = w ? w + 9 : ""; *w >= '0' && *w <= '9' && workers < 100000; w++)
			workers = workers * 10 + (uint64_t)(*w - '0');
		atomic_store(&lead_steps, workers ? 2 * workers + 2 : 0);
		uint64_t n = atomic_fetch_add(&nstep[FT_WIN_UNIT_BATCH], 1) + 1;
		int u = atomic_load(&unit);
		if (u != FT_WIN_UNIT_NONE && u != FT_WIN_UNIT_BATCH)
			return;
		atomic_store(&unit, FT_WIN_UNIT_BATCH);
		if (n > 1)
			step_end(n - 1);
		step_begin(FT_WIN_UNIT_BATCH, n);
	} else if (step_level < 0 && strncasecmp(name, "step", 4) == 0) {
		step_level = level;
		atomic_store(&unit, FT_WIN_UNIT_RANGE);
		step_begin(FT_WIN_UNIT_RANGE, atomic_fetch_add(&nstep[FT_WIN_UNIT_RANGE], 1) + 1);
	}
}

void ft_capture_pop(int level)
{
	if (step_level < 0 || level != step_level)
		return;
	step_level = -1;
	step_end(atomic_load(&nstep[FT_WIN_UNIT_RANGE]));
}

void ft_capture_mark(const char *name)
{
	if (!on_mask || !prefix(name, "feedtrace:optimizer.step"))
		return;
	uint64_t n = atomic_fetch_add(&nstep[FT_WIN_UNIT_OPT], 1) + 1;
	int u = atomic_load(&unit);
	if (u == FT_WIN_UNIT_RANGE)
		return;
	atomic_store(&unit, FT_WIN_UNIT_OPT);
	step_end(n);
	step_begin(FT_WIN_UNIT_OPT, n + 1);
}

/* A follower's descriptor hook, outside a window (shim/io.c): its leader's
 * window is open, so this open (a DataLoader worker's __getitem__ reading
 * a batch the leader asked for after it opened the window) starts its
 * own, before the flusher's next look. 1 if capturing now. */
int ft_capture_follow_now(void)
{
	if (!on_mask || atomic_load_explicit(&unit, memory_order_relaxed) != FT_WIN_UNIT_NONE)
		return 0;
	int32_t leader = atomic_load_explicit(&board->leader, memory_order_relaxed);
	if (!leader || leader == ft_pid || !atomic_load(&board->on) ||
	    atomic_load(&capturing) != 0)
		return 0;
	following = start(FT_WIN_FOLLOW, FT_WIN_UNIT_NONE, 0, 0, 0);
	return following;
}

/* ---- the setting ---- */

/* "12" or "1.5" seconds, in ns; -1 if not */
static int64_t seconds_ns(const char *s, const char **end)
{
	uint64_t whole = 0, frac = 0, scale = 1000000000ull;
	const char *p = s;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++)
		if ((whole = whole * 10 + (uint64_t)(*p - '0')) > 1000000)
			return -1;
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*p - '0') * scale;
			}
	}
	*end = p;
	return (int64_t)(whole * 1000000000ull + frac);
}

static int number(const char *s, const char **end, uint64_t *out)
{
	char *e;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &e, 10);
	if (errno || v > (1ull << 40))
		return -1;
	*out = v;
	*end = e;
	return 0;
}

/* off | on | steps:A-B[/K] | time:D[+S]; 0 when understood */
int ft_capture_parse(const char *v)
{
	const char *p;
	memset(&spec, 0, sizeof spec);
	if (!strcmp(v, "on"))
		return 0;
	if (!strcmp(v, "off")) {
		spec.mode = MODE_OFF;
		return 0;
	}
	if (!strncmp(v, "steps:", 6)) {
		if (number(v + 6, &p, &spec.a) || spec.a < 1 || *p != '-' ||
		    number(p + 1, &p, &spec.b) || spec.b < spec.a)
			goto bad;
		if (*p == '/' && (number(p + 1, &p, &spec.every) || spec.every <= spec.b - spec.a))
			goto bad;
		if (*p)
			goto bad;
		spec.mode = MODE_STEPS;
		return 0;
	}
	if (!strncmp(v, "time:", 5)) {
		int64_t d = seconds_ns(v + 5, &p), s = 0;
		if (d < 0)
			goto bad;
		if (*p == '+' && ((s = seconds_ns(p + 1, &p)) <= 0))
			goto bad;
		if (*p)
			goto bad;
		spec.mode = MODE_TIME;
		spec.delay_ns = (uint64_t)d;
		spec.dur_ns = (uint64_t)s;
		return 0;
	}
bad:
	memset(&spec, 0, sizeof spec);
	return -1;
}

static void req_path(char *out, size_t cap, const char *suffix)
{
	snprintf(out, cap, "%s/capture%s", ft_cfg.out_dir, suffix);
}

static int req_stat(uint64_t *ino, uint64_t *mtime, uint64_t *size)
{
	char path[4200];
	struct stat st;
	req_path(path, sizeof path, ".req");
	if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) != 0)
		return -1;
	*ino = st.st_ino;
	*mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	*size = (uint64_t)st.st_size;
	return 0;
}

unsigned ft_capture_init(void)
{
	const char *v = getenv("FEEDTRACE_CAPTURE");
	if (v && ft_capture_parse(v) != 0)
		ft_log("feedtrace: FEEDTRACE_CAPTURE=\"%.40s\" is not on, off, steps:A-B[/K] or "
		       "time:D[+S]; capturing all", v);
	idle_mask = FT_G_KEEP | ((ft_cfg.hooks & FT_G_IO) ? FT_G_FD : 0);
	unsigned on = ft_cfg.hooks | idle_mask;
	if (spec.mode == MODE_ON) {
		atomic_store(&capturing, 1);
		atomic_store(&ever, 1);
		return on;                      /* no gate (on_mask 0): the step entry points do nothing */
	}
	void *p = (void *)syscall(SYS_mmap, NULL, sizeof *board, PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	board = (long)p < 0 && (long)p > -4096 ? &board_local : p;
	board->t0_ns = ft_mono_ns();
	atomic_store(&on_mask, on);     /* last: the flusher's tick may look already */
	req_stat(&req_seen.ino, &req_seen.mtime, &req_seen.size);  /* older requests are not ours */
	if (spec.mode == MODE_TIME && !spec.delay_ns) {   /* time:0+S: from the first call */
		time_done = 1;
		win_seq = 1;
		win_reason = FT_WIN_TIME;
		atomic_store(&ever, 1);
		atomic_store(&capturing, 1);
		push_mark(FT_WIN_START, 0, ft_now());
		if (spec.dur_ns)
			stop_at_ns = board->t0_ns + spec.dur_ns;
		return on;
	}
	return idle_mask;
}

unsigned ft_capture_after_fork_child(unsigned groups)
{
	atomic_store(&marks_next, 0);
	marks_done = 0;
	for (int i = 0; i < MARKS; i++)
		atomic_store(&mark_stamp[i], 0);
	if (!atomic_load(&on_mask))
		return groups;
	/* a start or stop under way on a thread the child has not: the groups
	 * it had set say which */
	if (atomic_load(&capturing) == 2)
		atomic_store(&capturing, groups == atomic_load(&on_mask) ? 1 : 0);
	win_seq = 0;
	atomic_store(&ever, 0);
	atomic_store(&unit, FT_WIN_UNIT_NONE);
	for (int i = 0; i < 4; i++)
		atomic_store(&nstep[i], 0);
	first_step_ns = 0;
	atomic_store(&armed_target, 0);
	done_id = wait_done_id = 0;
	/* a window open at the fork goes on in the child, as the parent's */
	if (atomic_load(&capturing) == 1) {
		win_seq = 1;
		win_unit = FT_WIN_UNIT_NONE;
		win_reason = win_reason == FT_WIN_TIME ? FT_WIN_TIME : FT_WIN_FOLLOW;
		atomic_store(&win_last, 0);
		atomic_store(&ever, 1);
		following = win_reason == FT_WIN_FOLLOW;
		push_mark(FT_WIN_START, 0, ft_now());
	}
	return groups;
}

/* ---- the flusher's part ---- */

/* margin: steps left before a request's first step, so that every process
 * of the run sees it first: the steps of two flusher cycles or of one
 * second, whichever is longer (a loaded machine delays a flusher by more
 * than a cycle), at least 2 */
#define FT_CAPTURE_LEAD_NS 1000000000ull
static uint64_t margin(uint64_t cur)
{
	uint64_t first = atomic_load(&first_step_ns);
	uint64_t el = first ? ft_mono_ns() - first : 0;
	uint64_t per = cur > 1 && el ? el / (cur - 1) : 0;
	uint64_t lead = 2ull * ft_cfg.flush_ms * 1000000ull;
	if (lead < FT_CAPTURE_LEAD_NS)
		lead = FT_CAPTURE_LEAD_NS;
	uint64_t m = per ? (lead + per - 1) / per + 1 : 2;
	return m < 2 ? 2 : m > 1000 ? 1000 : m;
}

/* The first step of request id for every process of the run: the first
 * to read the request writes it in capture.ID.at, the others read it. */
static uint64_t agreed_start(uint32_t id, uint64_t cur)
{
	char path[4200], buf[32];
	snprintf(path, sizeof path, "%s/capture.%u.at", ft_cfg.out_dir, id);
	uint64_t want = cur + margin(cur) + atomic_load(&lead_steps);   /* the workers' too */
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0) {
		int n = snprintf(buf, sizeof buf, "%llu\n", (unsigned long long)want);
		syscall(SYS_write, fd, buf, n);
		syscall(SYS_close, fd);
		return want;
	}
	for (int tries = 0; tries < 50; tries++) {   /* written just now by another: read it */
		fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
		if (fd < 0)
			break;
		long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
		syscall(SYS_close, fd);
		if (n > 0 && buf[n - 1] == '\n') {
			buf[n] = 0;
			return strtoull(buf, NULL, 10);
		}
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
	return want;
}

static void touch_done(uint32_t id)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/capture.%u.done", ft_cfg.out_dir, id);
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		syscall(SYS_close, fd);
}

static int done_seen(uint32_t id)
{
	char path[4200];
	struct stat st;
	snprintf(path, sizeof path, "%s/capture.%u.done", ft_cfg.out_dir, id);
	return syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) == 0;
}

/* the request file: "feedtrace-capture id=N steps=K seconds=S" */
static void poll_request(void)
{
	uint64_t ino, mtime, size;
	if (req_stat(&ino, &mtime, &size) != 0 ||
	    (ino == req_seen.ino && mtime == req_seen.mtime && size == req_seen.size))
		return;
	req_seen.ino = ino;
	req_seen.mtime = mtime;
	req_seen.size = size;
	char path[4200], buf[256];
	req_path(path, sizeof path, ".req");
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
	syscall(SYS_close, fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	unsigned long id = 0, steps = 0, ms = 0;
	if (sscanf(buf, "feedtrace-capture id=%lu steps=%lu ms=%lu", &id, &steps, &ms) != 3 || !id)
		return;
	int u = atomic_load(&unit);
	int32_t leader = atomic_load(&board->leader);
	if (atomic_load(&capturing) != 0 ||
	    (!ms && u == FT_WIN_UNIT_NONE && leader && leader != ft_pid))
		return;                          /* busy; a worker follows its leader */
	if (steps && u != FT_WIN_UNIT_NONE) {
		uint64_t cur = atomic_load(&nstep[u]);
		uint64_t at = agreed_start((uint32_t)id, cur);
		atomic_store(&armed_last, at + steps - 1);
		atomic_store(&armed_id, (uint32_t)id);
		atomic_store(&armed_target, at);
		return;
	}
	if (start(FT_WIN_DEMAND, FT_WIN_UNIT_NONE, 0, 0, (uint32_t)id)) {
		if (ms)
			stop_at_ns = ft_mono_ns() + ms * 1000000ull;
		else
			wait_done_id = (uint32_t)id;
	}
}

void ft_capture_tick(void)
{
	if (!on_mask)
		return;
	uint64_t now = ft_mono_ns();
	if (spec.mode == MODE_TIME && !time_done && now >= board->t0_ns + spec.delay_ns) {
		time_done = 1;
		if (start(FT_WIN_TIME, FT_WIN_UNIT_NONE, 0, 0, 0) && spec.dur_ns)
			stop_at_ns = board->t0_ns + spec.delay_ns + spec.dur_ns;
	}
	if (stop_at_ns && now >= stop_at_ns) {
		stop_at_ns = 0;
		stop(0);
	}
	/* a process without steps of its own follows the one that counts them */
	int32_t leader = atomic_load(&board->leader);
	if (atomic_load(&unit) == FT_WIN_UNIT_NONE && leader && leader != ft_pid) {
		if (atomic_load(&board->on) && atomic_load(&capturing) == 0)
			following = start(FT_WIN_FOLLOW, FT_WIN_UNIT_NONE, 0, 0, 0);
		else if (!atomic_load(&board->on) && following && atomic_load(&capturing) == 1) {
			stop(0);
			following = 0;
		}
	}
	if (wait_done_id && done_seen(wait_done_id)) {
		wait_done_id = 0;
		stop(0);
	}
	uint32_t done = atomic_exchange(&done_id, 0);
	if (done)
		touch_done(done);
	poll_request();
}

/* how often a follower (a forked worker) looks at its leader's window */
#define FOLLOW_MS 10

/* ms until the tick has something to do at a known time; -1 none */
long ft_capture_wait_ms(void)
{
	if (!on_mask)
		return -1;
	uint64_t at = 0, now = ft_mono_ns();
	int32_t leader = atomic_load(&board->leader);
	if (atomic_load(&unit) == FT_WIN_UNIT_NONE && leader && leader != ft_pid)
		return FOLLOW_MS;               /* a follower: its leader's window, soon */
	if (spec.mode == MODE_TIME && !time_done)
		at = board->t0_ns + spec.delay_ns;
	else if (stop_at_ns)
		at = stop_at_ns;
	if (!at)
		return -1;
	return at <= now ? 0 : (long)((at - now) / 1000000u) + 1;
}
