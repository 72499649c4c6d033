/*
 * pywalk.c: the calling thread's innermost Python frames, "file:line in
 * function", read from CPython's memory without the GIL and without
 * calling into the interpreter, on CPython 3.9 and later:
 *  - 3.9 to 3.12: by the offsets of pyframe.h (checked against each
 *    version's headers at build time);
 *  - 3.13 and later: by the offsets CPython publishes for debuggers,
 *    _Py_DebugOffsets at the start of _PyRuntime, read once at start-up
 *    (cookie and version checked; a free-threaded build is refused).
 * The thread state is the one PyGILState_GetThisThreadState() returns (a
 * thread-specific key, bound while the thread has released the GIL); the
 * line is decoded here from the code object's line table (co_lnotab 3.9,
 * co_linetable 3.10, the location table 3.11 and later). Safe while the
 * thread has released the GIL, as PyTorch and ctypes.CDLL do around driver
 * calls: only the owning thread changes its frame chain, and it is here,
 * blocked in our hook; code objects and their tables are immutable;
 * nothing is written, nothing allocated, and every object's type is
 * checked before its fields are read.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "dlreal.h"
#include "log.h"
#include "pyframe.h"
#include "pywalk.h"

#define MAX_HOPS 256

/* A test build (tests/traced/test_pyversions.py) moves one offset of every
 * version's table, the code object's first line, to see a test fail. */
#ifndef FT_PYWALK_SKEW
#define FT_PYWALK_SKEW 0
#endif

enum table { LNOTAB, LINETABLE310, LOCATIONS };

/* What the walk reads, for the running CPython. */
static struct {
	int minor;              /* 3.minor */
	int frame_objects;      /* 3.9, 3.10: the chain is of PyFrameObjects */
	int via_cframe;         /* 3.11, 3.12: the thread state's cframe holds the frame */
	unsigned ts_cframe, ts_frame;
	unsigned f_back, f_code, f_instr, f_owner;
	int lasti_unit;         /* frame objects: bytes per f_lasti step */
	int owner_gen, owner_shim;      /* owners: a generator's, an entry frame's (and above) */
	uintptr_t code_tag;     /* 3.14 on: the tag bits of f_executable (a _PyStackRef) */
	unsigned co_filename, co_name, co_firstlineno, co_table, co_code, co_traceable;
	enum table table;
	unsigned str_ascii, str_utf8_len, str_utf8;
} L;

static struct {
	void *(*this_tstate)(void);
	int (*is_initialized)(void);
	const void *code_type, *str_type, *bytes_type, *frame_type, *none;
} py;
static int ready;               /* ft_pywalk_init's answer */

static void *sym(const char *name)
{
	if (!ft_real_dlsym)
		ft_dl_boot();
	return ft_real_dlsym ? ft_real_dlsym(RTLD_DEFAULT, name) : NULL;
}

static inline const void *field(const void *base, unsigned offset)
{
	return *(const void *const *)((const char *)base + offset);
}

static inline int int_at(const void *base, unsigned offset)
{
	return *(const int *)((const char *)base + offset);
}

static inline uint64_t u64_at(const void *base, unsigned offset)
{
	return *(const uint64_t *)((const char *)base + offset);
}

static void table_39(void)
{
	L.frame_objects = 1;
	L.ts_frame = PY39_TSTATE_FRAME;
	L.f_back = PY39_FRAME_BACK;
	L.f_code = PY39_FRAME_CODE;
	L.f_instr = PY39_FRAME_LASTI;
	L.lasti_unit = 1;
	L.co_firstlineno = PY39_CODE_FIRSTLINENO;
	L.co_filename = PY39_CODE_FILENAME;
	L.co_name = PY39_CODE_NAME;
	L.co_table = PY39_CODE_LNOTAB;
	L.table = LNOTAB;
}

static void table_310(void)
{
	L.frame_objects = 1;
	L.ts_frame = PY310_TSTATE_FRAME;
	L.f_back = PY310_FRAME_BACK;
	L.f_code = PY310_FRAME_CODE;
	L.f_instr = PY310_FRAME_LASTI;
	L.lasti_unit = PY311_CODEUNIT_SIZE;
	L.co_firstlineno = PY310_CODE_FIRSTLINENO;
	L.co_filename = PY310_CODE_FILENAME;
	L.co_name = PY310_CODE_NAME;
	L.co_table = PY310_CODE_LINETABLE;
	L.table = LINETABLE310;
}

static void table_311(void)
{
	L.via_cframe = 1;
	L.ts_cframe = PY311_TSTATE_CFRAME;
	L.ts_frame = PY311_CFRAME_CURRENT;
	L.f_back = PY311_FRAME_PREVIOUS;
	L.f_code = PY311_FRAME_CODE;
	L.f_instr = PY311_FRAME_PREV_INSTR;
	L.f_owner = PY311_FRAME_OWNER;
	L.owner_gen = PY311_OWNED_BY_GENERATOR;
	L.owner_shim = 256;             /* 3.11 has no entry frames */
	L.co_firstlineno = PY311_CODE_FIRSTLINENO;
	L.co_filename = PY311_CODE_FILENAME;
	L.co_name = PY311_CODE_NAME;
	L.co_table = PY311_CODE_LINETABLE;
	L.co_traceable = PY311_CODE_FIRSTTRACEABLE;
	L.co_code = PY311_CODE_ADAPTIVE;
	L.table = LOCATIONS;
}

static void table_312(void)
{
	L.via_cframe = 1;
	L.ts_cframe = PY312_TSTATE_CFRAME;
	L.ts_frame = PY312_CFRAME_CURRENT;
	L.f_back = PY312_FRAME_PREVIOUS;
	L.f_code = PY312_FRAME_CODE;
	L.f_instr = PY312_FRAME_PREV_INSTR;
	L.f_owner = PY312_FRAME_OWNER;
	L.owner_gen = PY312_OWNED_BY_GENERATOR;
	L.owner_shim = PY312_OWNED_BY_CSTACK;
	L.co_firstlineno = PY312_CODE_FIRSTLINENO;
	L.co_filename = PY312_CODE_FILENAME;
	L.co_name = PY312_CODE_NAME;
	L.co_table = PY312_CODE_LINETABLE;
	L.co_traceable = PY312_CODE_FIRSTTRACEABLE;
	L.co_code = PY312_CODE_ADAPTIVE;
	L.table = LOCATIONS;
}

/* An offset out of _Py_DebugOffsets, that must lie inside the struct
 * whose size is at size_at; 0 when it does not. Of the offsets read here
 * only the frame's executable is 0 in CPython (its first member): the
 * others must come out non-zero. */
static unsigned dbg(const char *d, unsigned size_at, unsigned at)
{
	uint64_t size = u64_at(d, size_at), off = u64_at(d, at);
	return size && size < 65536 && off < size ? (unsigned)off : 0;
}

/* 3.13 and later: the offsets from _Py_DebugOffsets. The positions in it
 * are 3.13's (pyframe.h), shifted by what 3.14 added; a table that does
 * not hold together (a PyObject's size and type offset, every offset
 * inside its struct) is refused, with one line. */
static int table_debug(const char *why_prefix)
{
	const char *d = sym("_PyRuntime");
	if (!d || memcmp(d + PYDBG_COOKIE, "xdebugpy", 8) != 0) {
		ft_log("%s: no _Py_DebugOffsets in _PyRuntime: no Python call sites", why_prefix);
		return 0;
	}
	uint64_t v = u64_at(d, PYDBG_VERSION);
	if ((int)(v >> 24) != 3 || (int)(v >> 16 & 0xff) != L.minor) {
		ft_log("%s: _Py_DebugOffsets of version %#llx: no Python call sites", why_prefix,
		       (unsigned long long)v);
		return 0;
	}
	if (u64_at(d, PYDBG_FREE_THREADED)) {
		ft_log("%s: a free-threaded build (no GIL, another object layout): no Python call sites",
		       why_prefix);
		return 0;
	}
	unsigned ts = L.minor >= 14 ? PYDBG314_SHIFT_TSTATE : 0;
	unsigned code = L.minor >= 14 ? PYDBG314_SHIFT_CODE : 0;
	unsigned obj = L.minor >= 14 ? PYDBG314_SHIFT_OBJECT : 0;
	unsigned fs = PYDBG313_FRAME_SIZE + ts, cs = PYDBG313_CODE_SIZE + code;
	L.ts_frame = dbg(d, PYDBG313_TSTATE_SIZE + ts, PYDBG313_TSTATE_FRAME + ts);
	L.f_back = dbg(d, fs, PYDBG313_FRAME_PREVIOUS + ts);
	L.f_code = dbg(d, fs, PYDBG313_FRAME_EXECUTABLE + ts);
	L.f_instr = dbg(d, fs, PYDBG313_FRAME_INSTR + ts);
	L.f_owner = dbg(d, fs, PYDBG313_FRAME_OWNER + ts);
	L.co_filename = dbg(d, cs, PYDBG313_CODE_FILENAME + code);
	L.co_name = dbg(d, cs, PYDBG313_CODE_NAME + code);
	L.co_table = dbg(d, cs, PYDBG313_CODE_LINETABLE + code);
	L.co_firstlineno = dbg(d, cs, PYDBG313_CODE_FIRSTLINENO + code);
	L.co_code = dbg(d, cs, PYDBG313_CODE_ADAPTIVE + code);
	int whole = u64_at(d, PYDBG313_OBJECT_SIZE + obj) == 16 &&
		    u64_at(d, PYDBG313_OBJECT_TYPE + obj) == PY_OBJECT_TYPE &&
		    L.ts_frame && L.f_back && L.f_instr && L.f_owner && L.co_filename &&
		    L.co_name && L.co_table && L.co_firstlineno && L.co_code;
	if (!whole) {
		ft_log("%s: _Py_DebugOffsets not as expected: no Python call sites", why_prefix);
		return 0;
	}
	L.owner_gen = PY312_OWNED_BY_GENERATOR;
	L.owner_shim = PY312_OWNED_BY_CSTACK;
	L.code_tag = L.minor >= 14 ? 7 : 0;
	L.table = LOCATIONS;
	return 1;
}

/* 3.minor of the CPython in this program, 0 if none: Py_Version (3.11 on),
 * else the text of Py_GetVersion (a static string, no GIL needed). */
static int python_minor(void)
{
	const unsigned long *v = (const unsigned long *)sym("Py_Version");
	if (v)
		return (*v >> 24) == 3 ? (int)(*v >> 16 & 0xff) : 0;
	const char *(*text)(void) = (const char *(*)(void))sym("Py_GetVersion");
	const char *s = text ? text() : NULL;
	if (!s || s[0] != '3' || s[1] != '.')
		return 0;
	return atoi(s + 2);
}

int ft_pywalk_init(void)
{
	static int tried;
	if (tried)
		return ready;
	py.this_tstate = (void *(*)(void))sym("PyGILState_GetThisThreadState");
	py.is_initialized = (int (*)(void))sym("Py_IsInitialized");
	if (!py.this_tstate || !py.is_initialized)
		return 0;               /* no CPython (yet): asked again later */
	tried = 1;
	L.minor = python_minor();
	if (L.minor < 9)
		return 0;       /* sites through the public API, GIL held (callsite.c) */
	char why[48];
	snprintf(why, sizeof why, "feedtrace: CPython 3.%d", L.minor);
	py.code_type = sym("PyCode_Type");
	py.str_type = sym("PyUnicode_Type");
	py.bytes_type = sym("PyBytes_Type");
	py.frame_type = sym("PyFrame_Type");
	py.none = sym("_Py_NoneStruct");
	if (!py.code_type || !py.str_type || !py.bytes_type || !py.frame_type || !py.none)
		return 0;
	L.str_ascii = L.minor <= 11 ? PY39_STR_ASCII_DATA : PY312_STR_ASCII_DATA;
	L.str_utf8_len = L.minor <= 11 ? PY39_STR_UTF8_LENGTH : PY312_STR_UTF8_LENGTH;
	L.str_utf8 = L.minor <= 11 ? PY39_STR_UTF8 : PY312_STR_UTF8;
	if (L.minor == 9)
		table_39();
	else if (L.minor == 10)
		table_310();
	else if (L.minor == 11)
		table_311();
	else if (L.minor == 12)
		table_312();
	else if (!table_debug(why))
		return ready = -1;
	L.co_firstlineno += FT_PYWALK_SKEW;
	ready = 1;
	return 1;
}

/* A str object's UTF-8 text without calling into CPython: the inline text
 * of a compact ASCII string, else the UTF-8 copy if CPython made one. */
static const char *str_of(const void *s, size_t *len)
{
	if (!s || field(s, PY_OBJECT_TYPE) != py.str_type)
		return NULL;
	uint32_t state = *(const uint32_t *)((const char *)s + PY_STR_STATE);
	if (!(state & (1u << PY_STR_COMPACT_BIT)))
		return NULL;
	if (state & (1u << PY_STR_ASCII_BIT)) {
		*len = *(const size_t *)((const char *)s + PY_STR_LENGTH);
		return (const char *)s + L.str_ascii;
	}
	const char *utf8 = field(s, L.str_utf8);
	*len = *(const size_t *)((const char *)s + L.str_utf8_len);
	return utf8;
}

/* A signed varint of the location table: 6 bits a byte, low bit the sign. */
static int svarint(const unsigned char *p, long n, long *i)
{
	unsigned v = 0, shift = 0, b;
	do {
		if (*i >= n || shift > 24)
			return 0;
		b = p[(*i)++];
		v |= (b & 63u) << shift;
		shift += 6;
	} while (b & 64);
	return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/* The line of the instruction at byte offset `at` of a code object, from
 * its line table; -1 where the table says none. */
static int line_at(const char *code, int at)
{
	const char *b = field(code, L.co_table);
	if (!b || field(b, PY_OBJECT_TYPE) != py.bytes_type)
		return -1;
	const unsigned char *p = (const unsigned char *)b + PY_BYTES_DATA;
	long n = *(const ssize_t *)(b + PY_BYTES_SIZE);
	int line = int_at(code, L.co_firstlineno), end = 0;
	switch (L.table) {
	case LNOTAB:            /* (bytecode bytes, line delta) pairs */
		for (long i = 0; i + 1 < n; i += 2) {
			end += p[i];
			if (end > at)
				break;
			line += (signed char)p[i + 1];
		}
		return line;
	case LINETABLE310:      /* (range bytes, line delta or -128: none) pairs */
		for (long i = 0; i + 1 < n; i += 2) {
			int start = end, delta = (signed char)p[i + 1];
			end += p[i];
			if (delta != -128)
				line += delta;
			if (start <= at && at < end)
				return delta == -128 ? -1 : line;
		}
		return -1;
	case LOCATIONS:         /* entries of 1 to 8 code units, a line delta each */
		for (long i = 0; i < n;) {
			unsigned head = p[i++];
			int kind = (head >> 3) & 15, start = end;
			end += ((head & 7) + 1) * PY311_CODEUNIT_SIZE;
			if (kind == 13 || kind == 14)           /* no columns, long form */
				line += svarint(p, n, &i);
			else if (kind == 11 || kind == 12)      /* one line, 1 or 2 below */
				line += kind - 10;
			if (start <= at && at < end)
				return kind == 15 ? -1 : line;
			while (i < n && !(p[i] & 128))
				i++;
		}
		return -1;
	}
	return -1;
}

/* Line numbers by (code object, instruction offset), remembered: a line
 * is found by decoding the code object's line table from its start
 * (thousands of instructions for a long function). One 64-bit word per
 * entry, a 32-bit hash of the key above the line, so that threads can
 * share it without a lock and never read a torn entry. A wrong answer
 * needs two keys with the same hash in the same entry (one in 2^32), or
 * a code object freed and another made at its address with the same first
 * line and filename object. */
#define LINE_CACHE 1024
static _Atomic uint64_t line_cache[LINE_CACHE];

static int line_of(const char *code, int offset)
{
	uint64_t k = (uint64_t)(uintptr_t)code * 0x9E3779B97F4A7C15ull ^
		     (uint64_t)(uint32_t)offset * 0xC2B2AE3D27D4EB4Full ^
		     (uint64_t)(uintptr_t)field(code, L.co_filename);
	k ^= k >> 29;
	uint32_t tag = (uint32_t)(k >> 32) | 1;      /* never 0: 0 is an empty entry */
	_Atomic uint64_t *e = &line_cache[k & (LINE_CACHE - 1)];
	uint64_t v = atomic_load_explicit(e, memory_order_relaxed);
	if ((uint32_t)(v >> 32) == tag)
		return (int)(uint32_t)v;
	int line = line_at(code, offset);
	atomic_store_explicit(e, (uint64_t)tag << 32 | (uint32_t)line, memory_order_relaxed);
	return line;
}

static size_t put_text(char *out, size_t len, size_t cap, const char *s, size_t n)
{
	if (!s) {
		s = "?";
		n = 1;
	}
	if (n > cap - len - 1)
		n = cap - len - 1;
	memcpy(out + len, s, n);
	return len + n;
}

/* The code object of frame f and the byte offset of its instruction; NULL
 * with *skip set for a frame that is no call site (an entry frame, one
 * being set up), NULL alone where the chain is not what it should be. */
static const char *frame_code(const char *f, int *at, int *skip)
{
	*skip = 0;
	if (L.frame_objects) {
		if (field(f, PY_OBJECT_TYPE) != py.frame_type)
			return NULL;
		const char *code = field(f, L.f_code);
		if (!code || field(code, PY_OBJECT_TYPE) != py.code_type)
			return NULL;
		int lasti = int_at(f, L.f_instr);
		*skip = lasti < 0;      /* not started */
		*at = lasti * L.lasti_unit;
		return *skip ? NULL : code;
	}
	int owner = *((const unsigned char *)f + L.f_owner);
	const char *code = (const char *)((uintptr_t)field(f, L.f_code) & ~L.code_tag);
	if (owner >= L.owner_shim) {
		*skip = 1;
		return NULL;
	}
	if (!code || field(code, PY_OBJECT_TYPE) != py.code_type) {
		*skip = code == py.none;        /* 3.13 on: an entry frame's */
		return NULL;
	}
	const char *first = code + L.co_code;
	const char *last = field(f, L.f_instr);
	int traceable = L.co_traceable ? int_at(code, L.co_traceable) : 0;
	if (owner != L.owner_gen && last < first + traceable * PY311_CODEUNIT_SIZE) {
		*skip = 1;              /* a frame still being set up */
		return NULL;
	}
	*at = (int)(last - first);
	return code;
}

size_t ft_pywalk(char *text, size_t cap, int frames)
{
	text[0] = 0;
	if (ready <= 0 || !py.is_initialized())
		return 0;
	const char *ts = py.this_tstate();
	if (L.via_cframe && ts)
		ts = field(ts, L.ts_cframe);
	const char *f = ts ? field(ts, L.ts_frame) : NULL;
	size_t len = 0;
	int shown = 0;
	for (int hops = 0; f && shown < frames && hops < MAX_HOPS && len + 64 < cap;
	     hops++, f = field(f, L.f_back)) {
		int at = 0, skip;
		const char *code = frame_code(f, &at, &skip);
		if (!code) {
			if (skip)
				continue;
			break;
		}
		int line = line_of(code, at);
		size_t n1 = 0, n2 = 0;
		const char *file = str_of(field(code, L.co_filename), &n1);
		const char *func = str_of(field(code, L.co_name), &n2);
		if (shown++)
			text[len++] = ';';
		len = put_text(text, len, cap, file, n1);
		char num[24];
		int k = snprintf(num, sizeof num, ":%d in ", line);
		len = put_text(text, len, cap, num, k > 0 ? (size_t)k : 0);
		len = put_text(text, len, cap, func, n2);
	}
	text[len] = 0;
	return len;
}
