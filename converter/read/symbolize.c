/*
 * symbolize.c: a process's native stacks as functions and source lines,
 * read offline from the files its MODULES chunks name (symbolize.h).
 * One libdwfl session per process; a module is reported to it when a
 * frame first falls in it, and only when the file's GNU build-id is the
 * one recorded (else the frame stays module+offset and one note says
 * why). Debug files: the file's own DWARF, else libdwfl's standard search
 * (build-id under /usr/lib/debug/.build-id, .gnu_debuglink), the --symbols
 * directories included; there also a copy of the module by its name.
 * Stacks are symbolised once each (cached per process); a lock guards it
 * all, since the converter's second stage may ask too.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <libiberty/demangle.h>

#include "symbolize.h"
#include "util.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char **dirs;
static int ndirs;
static char *debug_path;         /* libdwfl's search path, --symbols appended */
static char **notes;
static int nnotes;

enum { MOD_UNSEEN, MOD_OK, MOD_REFUSED };

struct mod {
	int state;
	Dwfl_Module *dm;
	int has_syms;            /* .symtab or DWARF */
	int bare_frames;         /* frames shown without a function or line */
};

struct cached { uint32_t id, key; char *text; };
struct frame { uint64_t ip; char *text; int own, tracer; };   /* one return address, read */
struct bytext { uint64_t hash; uint32_t id; };   /* text -> its first stack id */

struct sym {
	Dwfl *dwfl;
	struct mod *mods;
	struct cached *c;
	size_t nc, capc;
	struct bytext *t;
	size_t nt, capt;
	struct frame *f;         /* return addresses already read: stacks share most */
	size_t nf, capf;
	char **names;            /* data symbols (ft_data_symbol) */
	size_t nnames;
	int noted;               /* the process's "no symbols" note was made */
};

void ft_symbols_add_dir(const char *dir)
{
	dirs = ft_xrealloc(dirs, (size_t)(ndirs + 1) * sizeof *dirs);
	dirs[ndirs++] = ft_xstrdup(dir);
}

static void note(const char *text)
{
	for (int i = 0; i < nnotes; i++)
		if (!strcmp(notes[i], text))
			return;
	notes = ft_xrealloc(notes, (size_t)(nnotes + 1) * sizeof *notes);
	notes[nnotes++] = ft_xstrdup(text);
}

int ft_symbols_notes(const char ***lines)
{
	*lines = (const char **)notes;
	return nnotes;
}

void ft_symbols_print_notes(FILE *out, const char *prefix)
{
	for (int i = 0; i < nnotes; i++)
		fprintf(out, "%s%s\n", prefix, notes[i]);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* feedtrace's own, libc's and the driver's frames: kept in the stack, not
 * the headline, nor in the "no symbols" note */
static int system_module(const char *path)
{
	static const char *const names[] = {
		"libfeedtrace", "libc.so", "libc-", "ld-linux", "libpthread", "libdl.so",
		"libcuda.so", "libcudart.so", "libgcc_s", "libstdc++", "libm.so",
		"libpython", "python3",         /* the interpreter: its program is Python */
	};
	const char *b = base_name(path);
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strncmp(b, names[i], strlen(names[i])))
			return 1;
	return 0;
}

/* CPython's interpreter (a distribution's is often stripped: Debian's
 * python3.11 has no .symtab, so its static functions read as
 * module+offset) */
static int interpreter(const char *path)
{
	const char *b = base_name(path);
	return !strncmp(b, "python3", 7) || !strncmp(b, "libpython", 9);
}

/* A regular file, opened without waiting (a trace may name a FIFO or a
 * device: never blocked on, never read); -1 if none. */
static int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* the build-id of the ELF file open at fd: its length, -1 if no ELF */
static int fd_build_id(int fd, unsigned char *id, size_t cap)
{
	int n = -1;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF) {
		const void *p;
		ssize_t k = dwelf_elf_gnu_build_id(e, &p);
		n = k > 0 && (size_t)k <= cap ? (int)k : 0;
		if (n)
			memcpy(id, p, (size_t)n);
	}
	if (e)
		elf_end(e);
	return n;
}

/* path opened when it is an ELF file with this build-id: the descriptor;
 * -2 an ELF file with another one; -1 none there (gone, not ELF) */
static int open_same(const unsigned char *want, int wn, const char *path)
{
	int fd = open_regular(path);
	if (fd < 0)
		return -1;
	unsigned char id[256];
	int n = fd_build_id(fd, id, sizeof id);
	if (n == wn && !memcmp(id, want, (size_t)n))
		return fd;
	close(fd);
	return n < 0 ? -1 : -2;
}

/* libdwfl's standard search, then a copy of the module in a --symbols
 * directory under its own name (a build directory), with the same build-id */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  GElf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **found)
{
	int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink, crc, found);
	if (fd >= 0 || !file_name)
		return fd;
	const unsigned char *want;
	GElf_Addr vaddr;
	int wn = dwfl_module_build_id(mod, &want, &vaddr);
	for (int i = 0; i < ndirs && wn > 0; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dirs[i], base_name(file_name));
		fd = open_same(want, wn, path);
		if (fd >= 0) {
			*found = ft_xstrdup(path);
			return fd;
		}
	}
	return -1;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debug_path,
};

static void sym_free(void *arg)
{
	struct sym *s = arg;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	for (size_t i = 0; i < s->capc; i++)
		free(s->c[i].text);
	free(s->c);
	free(s->t);
	for (size_t i = 0; i < s->capf; i++)
		free(s->f[i].text);
	free(s->f);
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	free(s->mods);
	free(s);
}

static struct sym *sym_of(struct ft_process *p)
{
	if (p->sym)
		return p->sym;
	if (!debug_path) {
		size_t n = 64;
		for (int i = 0; i < ndirs; i++)
			n += strlen(dirs[i]) + 1;
		debug_path = ft_xmalloc(n);
		strcpy(debug_path, "-:.debug:/usr/lib/debug");
		for (int i = 0; i < ndirs; i++) {
			strcat(debug_path, ":");
			strcat(debug_path, dirs[i]);
		}
	}
	struct sym *s = ft_xcalloc(1, sizeof *s);
	s->mods = ft_xcalloc((size_t)p->nmods + 1, sizeof *s->mods);
	s->dwfl = dwfl_begin(&callbacks);
	p->sym = s;
	p->sym_free = sym_free;
	return s;
}

/* Reports module i to libdwfl, once: the recorded file, else a copy in a
 * --symbols directory, when its build-id is the one the run had. */
static struct mod *module(struct sym *s, const struct ft_process *p, int i)
{
	struct mod *m = &s->mods[i];
	if (m->state != MOD_UNSEEN)
		return m;
	const struct ft_module *fm = &p->mods[i];
	m->state = MOD_REFUSED;
	const char *use = fm->path;
	char path[4096];
	int same = open_same(fm->build_id, fm->build_id_len, fm->path), fd = same;
	for (int d = 0; fd < 0 && d < ndirs; d++) {
		snprintf(path, sizeof path, "%s/%s", dirs[d], base_name(fm->path));
		fd = open_same(fm->build_id, fm->build_id_len, path);
		use = path;
	}
	if (fd < 0) {
		char t[4400];
		if (same == -2)
			snprintf(t, sizeof t, "%s was rebuilt after the run (its build-id differs): "
				 "its frames are shown as module+offset", fm->path);
		else
			snprintf(t, sizeof t, "%s is gone (or no ELF file): its frames are shown as "
				 "module+offset (--symbols DIR finds a copy)", fm->path);
		note(t);
		return m;
	}
	if (!s->dwfl) {
		close(fd);
		return m;
	}
	dwfl_report_begin_add(s->dwfl);
	m->dm = dwfl_report_elf(s->dwfl, base_name(fm->path), use, fd, fm->bias, false);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (!m->dm) {
		close(fd);              /* libdwfl keeps it only when it took the module */
		return m;
	}
	m->state = MOD_OK;
	Dwarf_Addr bias;
	m->has_syms = dwfl_module_getdwarf(m->dm, &bias) != NULL;
	Elf *e = m->has_syms ? NULL : dwfl_module_getelf(m->dm, &bias);
	for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			m->has_syms = 1;
	}
	return m;
}

static int module_at(const struct ft_process *p, uint64_t ip)
{
	for (int i = p->nmods - 1; i >= 0; i--)      /* the latest load wins */
		if (ip >= p->mods[i].lo && ip < p->mods[i].hi)
			return i;
	return -1;
}

struct out {
	char *s;
	size_t len, cap;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	if (!o->s) {
		o->cap = 256;
		o->s = ft_xmalloc(o->cap);
	}
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(o->s + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		o->cap = 2 * o->cap + (size_t)n + 64;
		o->s = ft_xrealloc(o->s, o->cap);
	}
}

/* a name as users read it: C++ demangled, without a symbol version
 * ("__libc_start_main@@GLIBC_2.34" reads __libc_start_main) */
static void put_name(struct out *o, const char *name)
{
	char plain[512];
	const char *at = name ? strchr(name, '@') : NULL;
	if (at && at > name && (size_t)(at - name) < sizeof plain) {
		memcpy(plain, name, (size_t)(at - name));
		plain[at - name] = 0;
		name = plain;
	}
	char *d = name && name[0] == '_' && name[1] == 'Z' ?
		  cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI) : NULL;
	put(o, "%s", d ? d : name ? name : "??");
	free(d);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		n = dwarf_formstring(&a);
	return n ? n : dwarf_diename(die);
}

/* One return address: its frames, innermost first (inlined calls
 * expanded), each "name (file:line)" on its own line. Returns how many;
 * *own says whether they are the program's own code. */
static int put_frames(struct sym *s, const struct ft_process *p, uint64_t ip,
		      struct out *o, int *own)
{
	int mi = module_at(p, ip);
	*own = 0;
	if (mi < 0) {
		put(o, "0x%llx", (unsigned long long)ip);
		return 1;
	}
	const struct ft_module *fm = &p->mods[mi];
	struct mod *m = module(s, p, mi);
	*own = !system_module(fm->path);
	uint64_t file_ip = ip - fm->bias;
	if (m->state != MOD_OK) {
		put(o, "%s+0x%llx", base_name(fm->path), (unsigned long long)file_ip);
		return 1;
	}
	Dwarf_Addr pc = ip - 1;      /* a return address: the call is before it */
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(m->dm, pc, &off, &sym, NULL, NULL, NULL);
	Dwfl_Line *line = dwfl_module_getsrc(m->dm, pc);
	int lineno = 0;
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (!file || lineno <= 0) {
		if (name) {
			put_name(o, name);
			put(o, "+0x%llx (%s)", (unsigned long long)off + 1, base_name(fm->path));
		} else {
			put(o, "%s+0x%llx", base_name(fm->path), (unsigned long long)file_ip);
		}
		if (!name && (*own || interpreter(fm->path)) && !m->has_syms)
			m->bare_frames++;
		return 1;
	}
	/* inlined calls: the scopes around pc, innermost first */
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m->dm, pc, &bias);
	Dwarf_Die *scopes = NULL;
	int ns = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
	int frames = 0;
	const char *function = NULL;  /* the source's name: "level", not "level.constprop.0" */
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (cu)
		dwarf_getsrcfiles(cu, &files, &nfiles);
	for (int i = 0; i < ns; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram && !function)
			function = die_name(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		put_name(o, die_name(&scopes[i]));
		put(o, " (%s:%d)\n", base_name(file), lineno);
		frames++;
		/* the caller's line: where this was inlined */
		Dwarf_Attribute a;
		Dwarf_Word cf = 0, cl = 0;
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) == 0 &&
		    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0 &&
		    files && cf < nfiles) {
			const char *f = dwarf_filesrc(files, cf, NULL, NULL);
			if (f)
				file = f;
			lineno = (int)cl;
		}
	}
	put_name(o, function ? function : name);
	free(scopes);
	put(o, " (%s:%d)", base_name(file), lineno);
	return frames + 1;
}

/* put_frames once per return address (libdwfl's symbol lookup scans the
 * whole symbol table: thousands of stacks share their outer frames) */
static const struct frame *frame_of(struct sym *s, const struct ft_process *p, uint64_t ip)
{
	if (2 * (s->nf + 1) > s->capf) {
		struct frame *old = s->f;
		size_t oldcap = s->capf;
		s->capf = s->capf ? 2 * s->capf : 1024;
		s->f = ft_xcalloc(s->capf, sizeof *s->f);
		for (size_t i = 0; i < oldcap; i++) {
			if (!old[i].text)
				continue;
			size_t j = (old[i].ip * 0x9E3779B97F4A7C15ull >> 20) & (s->capf - 1);
			while (s->f[j].text)
				j = (j + 1) & (s->capf - 1);
			s->f[j] = old[i];
		}
		free(old);
	}
	size_t j = (ip * 0x9E3779B97F4A7C15ull >> 20) & (s->capf - 1);
	for (; s->f[j].text; j = (j + 1) & (s->capf - 1))
		if (s->f[j].ip == ip)
			return &s->f[j];
	struct out o = { NULL, 0, 0 };
	int own;
	put_frames(s, p, ip, &o, &own);
	int mi = module_at(p, ip);
	int tracer = mi >= 0 && !strncmp(base_name(p->mods[mi].path), "libfeedtrace", 12);
	s->f[j] = (struct frame){ ip, o.s ? o.s : ft_xstrdup(""), own, tracer };
	s->nf++;
	return &s->f[j];
}

static char *symbolise(struct sym *s, const struct ft_process *p, const char *stack)
{
	struct out all = { NULL, 0, 0 };
	char *lines[256];
	int own[256], tracer[256], n = 0;
	for (const char *q = stack + 3; *q && n < 256;) {
		char *end;
		uint64_t ip = strtoull(q, &end, 16);
		if (end == q)
			break;
		q = *end == ',' ? end + 1 : end;
		const struct frame *fr = frame_of(s, p, ip);
		/* an address's frames, one per line (inlined calls first) */
		for (const char *l = fr->text; l && n < 256;) {
			const char *nl = strchr(l, '\n');
			lines[n] = strndup(l, nl ? (size_t)(nl - l) : strlen(l));
			tracer[n] = fr->tracer;
			own[n++] = fr->own;
			l = nl ? nl + 1 : NULL;
		}
	}
	/* the headline: the innermost frame of the program's own code; in a
	 * stack of system code only (the interpreter taking the GIL), the
	 * innermost frame that is not feedtrace's */
	int h = 0;
	while (h < n && !own[h])
		h++;
	if (h == n)
		for (h = 0; h < n && tracer[h]; h++)
			;
	if (h == n)
		h = 0;
	if (n)
		put(&all, "%s", lines[h]);
	if (h + 1 < n && own[h + 1])
		put(&all, " <- %s", lines[h + 1]);
	/* the stack below it, feedtrace's own frames (the hook that recorded
	 * the call, the thread start it wraps) left out: no view shows them */
	for (int i = 0; i < n; i++) {
		if (!tracer[i] || i == h)
			put(&all, "\n%s", lines[i]);
		free(lines[i]);
	}
	return all.s ? all.s : ft_xstrdup("");
}

/* the modules a "no symbols" note named already (any process's): each is
 * named once in a run's notes */
static char **bare_named;
static int nbare_named;

static int named_bare(const char *name)
{
	for (int i = 0; i < nbare_named; i++)
		if (!strcmp(bare_named[i], name))
			return 1;
	bare_named = ft_xrealloc(bare_named, (size_t)(nbare_named + 1) * sizeof *bare_named);
	bare_named[nbare_named++] = ft_xstrdup(name);
	return 0;
}

static void note_bare(struct sym *s, const struct ft_process *p)
{
	/* the program's own modules, then the interpreter: each its own note */
	for (int k = 0; k < 2; k++) {
		struct out o = { NULL, 0, 0 };
		for (int i = 0; i < p->nmods; i++) {
			if (!s->mods[i].bare_frames || s->mods[i].state != MOD_OK ||
			    interpreter(p->mods[i].path) != k)
				continue;
			s->mods[i].bare_frames = 0;
			const char *b = base_name(p->mods[i].path);
			if (!named_bare(b))
				put(&o, "%s%s", o.len ? ", " : "", b);
		}
		if (!o.len)
			continue;
		if (k)
			put(&o, " (the Python interpreter) %s no symbol table: frames there are "
			    "shown as module+offset; install the interpreter's debug symbols "
			    "(its -dbgsym or -dbg package) or pass --symbols DIR",
			    strchr(o.s, ',') ? "have" : "has");
		else
			put(&o, " %s no symbols: frames there are shown as module+offset; build "
			    "with -g (and do not strip), install the debug package, or pass "
			    "--symbols DIR", strchr(o.s, ',') ? "have" : "has");
		note(o.s);
		free(o.s);
	}
}

/* the cache: open addressing by stack id */
static struct cached *cache_slot(struct sym *s, uint32_t id)
{
	if (2 * (s->nc + 1) > s->capc) {
		struct cached *old = s->c;
		size_t oldcap = s->capc;
		s->capc = s->capc ? 2 * s->capc : 256;
		s->c = ft_xcalloc(s->capc, sizeof *s->c);
		s->nc = 0;
		for (size_t i = 0; i < oldcap; i++) {
			if (!old[i].id)
				continue;
			*cache_slot(s, old[i].id) = old[i];
			s->nc++;
		}
		free(old);
	}
	size_t i = (id * 2654435761u) & (s->capc - 1);
	while (s->c[i].id && s->c[i].id != id)
		i = (i + 1) & (s->capc - 1);
	return &s->c[i];
}

/* the first stack id whose frames read as text (an unrolled loop calls
 * from several addresses of one line: one site) */
static uint32_t text_key(struct sym *s, const char *text, uint32_t id)
{
	if (2 * (s->nt + 1) > s->capt) {
		struct bytext *old = s->t;
		size_t oldcap = s->capt;
		s->capt = s->capt ? 2 * s->capt : 256;
		s->t = ft_xcalloc(s->capt, sizeof *s->t);
		for (size_t i = 0; i < oldcap; i++) {
			if (!old[i].hash)
				continue;
			size_t j = (old[i].hash >> 1) & (s->capt - 1);
			while (s->t[j].hash)
				j = (j + 1) & (s->capt - 1);
			s->t[j] = old[i];
		}
		free(old);
	}
	uint64_t h = ft_hash_str(text) | 1;      /* 0: an empty slot */
	size_t j = (h >> 1) & (s->capt - 1);       /* (bit 0 is always set) */
	for (; s->t[j].hash; j = (j + 1) & (s->capt - 1))
		if (s->t[j].hash == h && !strcmp(cache_slot(s, s->t[j].id)->text, text))
			return s->t[j].id;
	s->t[j] = (struct bytext){ h, id };
	s->nt++;
	return id;
}

/* symbolised once, under the lock */
static struct cached *site_of(struct ft_process *p, uint32_t id, const char *raw)
{
	struct sym *s = sym_of(p);
	struct cached *c = cache_slot(s, id);
	if (!c->id) {
		char *text = symbolise(s, p, raw);
		c = cache_slot(s, id);
		c->id = id;
		c->text = text;
		s->nc++;
		c->key = text_key(s, text, id);
		c = cache_slot(s, id);
		note_bare(s, p);
	}
	return c;
}

const char *ft_site_text(const struct ft_process *cp, uint32_t id)
{
	const char *raw = ft_string(cp, id);
	if (!raw || strncmp(raw, "#S:", 3) || cp->nmods == 0)
		return ft_site_symbols(cp, id);
	pthread_mutex_lock(&lock);
	const char *text = site_of((struct ft_process *)cp, id, raw)->text;
	pthread_mutex_unlock(&lock);
	return text;
}

uint32_t ft_site_key(const struct ft_process *cp, uint32_t id)
{
	const char *raw = ft_string(cp, id);
	if (!raw || strncmp(raw, "#S:", 3) || cp->nmods == 0)
		return id;
	pthread_mutex_lock(&lock);
	uint32_t key = site_of((struct ft_process *)cp, id, raw)->key;
	pthread_mutex_unlock(&lock);
	return key;
}

const char *ft_data_symbol(const struct ft_process *cp, uint64_t addr)
{
	int mi = module_at(cp, addr);
	if (mi < 0)
		return NULL;
	struct ft_process *p = (struct ft_process *)cp;
	pthread_mutex_lock(&lock);
	struct sym *s = sym_of(p);
	struct mod *m = module(s, p, mi);
	const char *name = NULL;
	GElf_Off off = 0;
	GElf_Sym sym;
	if (m->state == MOD_OK)
		name = dwfl_module_addrinfo(m->dm, addr, &off, &sym, NULL, NULL, NULL);
	/* an object's own symbol only: not a function's, not past its size */
	if (name && (GELF_ST_TYPE(sym.st_info) != STT_OBJECT || off >= sym.st_size))
		name = NULL;
	char buf[512];
	const char *out = NULL;
	if (name) {
		if (off)
			snprintf(buf, sizeof buf, "%s+0x%llx", name, (unsigned long long)off);
		else
			snprintf(buf, sizeof buf, "%s", name);
		/* kept with the process's stacks, freed with them */
		s->names = ft_xrealloc(s->names, (s->nnames + 1) * sizeof *s->names);
		out = s->names[s->nnames++] = ft_xstrdup(buf);
	}
	pthread_mutex_unlock(&lock);
	return out;
}
