/*
 * callsite.c: where a wait on the GPU came from. At explicit waits and
 * hidden syncs only (never at submissions): the native stack as return
 * addresses (the unwinder of libgcc_s, _Unwind_Backtrace, over .eh_frame:
 * never a descriptor, see stack_ips; FEEDTRACE_STACK_DEPTH frames, interned as one
 * "#S:" string; the flusher symbolises it later), and, when the calling
 * thread runs Python, its innermost Python frames (file:line in function).
 * CPython is found at start-up in the running program (no link against
 * libpython, nothing done for programs that are not Python):
 *  - CPython 3.9 and later: the thread's frame chain is read, without
 *    the GIL and without calling into the interpreter, by pywalk.c. This
 *    works while the thread has released the GIL, as PyTorch (.item(),
 *    .cpu()) and ctypes.CDLL do around driver calls.
 *  - older versions: the public frame API, only while the thread holds
 *    the GIL (PyEval_GetFrame and friends).
 *  - a layout pywalk.c refused (a free-threaded build, _Py_DebugOffsets
 *    not as expected): no Python sites, nor thread names.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <unwind.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "recorder.h"
#include "dlreal.h"
#include "pywalk.h"

#define MAX_DEPTH 32
#define PY_FRAMES 3

typedef struct _object PyObject;

static struct {
	int (*gil_check)(void);
	int (*is_initialized)(void);
	void *(*this_tstate)(void);
	PyObject *(*get_frame)(void);
	PyObject *(*frame_code)(PyObject *);
	int (*frame_line)(PyObject *);
	PyObject *(*frame_back)(PyObject *);
	PyObject *(*getattr)(PyObject *, const char *);
	PyObject *(*map_item)(PyObject *, const char *);
	const char *(*utf8)(PyObject *);
	void (*decref)(PyObject *);
	void (*err_fetch)(PyObject **, PyObject **, PyObject **);
	void (*err_restore)(PyObject *, PyObject *, PyObject *);
} py;
static int py_ready;

static int pywalk_ready;     /* frames read without the GIL (pywalk.c) */

/* libc's dlsym itself, not the wrapper of it (shim/dl.c): these look-ups
 * are never CUDA's, and the wrappers sit above this file */
static void *sym(void *h, const char *name)
{
	if (!ft_real_dlsym)
		ft_dl_boot();
	return ft_real_dlsym ? ft_real_dlsym(h, name) : NULL;
}

/* The stack walker never uses a descriptor. libunwind 1.6 (which this
 * used before) validates addresses by read()ing and write()ing one byte
 * through a pipe it opens once and keeps by number: after a program's
 * closefrom(3) it read and wrote the program's own files at fds 3 and 4
 * (tests/traced/test_integrity_fds.py::test_closefrom_files_and_stacks). libgcc's
 * _Unwind_Backtrace follows the .eh_frame tables only (found through
 * _dl_find_object, no lock, no allocation): no descriptor, no validation
 * read, no per-thread cache; a frame without unwind info ends the walk
 * instead of being guessed from frame pointers. Taken from libgcc_s.so.1
 * by handle: libunwind.so also defines _Unwind_Backtrace (on top of its
 * own walker, pipe included), and wins a plain link or lookup whenever it
 * is loaded first. */
static _Unwind_Reason_Code (*backtrace_fn)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*get_ip_fn)(struct _Unwind_Context *);

struct walk {
	void **ip;
	int n, depth;
};

static _Unwind_Reason_Code walk_one(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	uintptr_t pc = get_ip_fn(ctx);
	if (w->n >= w->depth || pc == 0)
		return _URC_END_OF_STACK;
	w->ip[w->n++] = (void *)pc;
	return _URC_NO_REASON;
}

/* Return addresses, innermost first, this function's caller first. */
static __attribute__((noinline)) int stack_ips(void **ip, int depth)
{
	struct walk w = { ip, 0, depth };
	if (!backtrace_fn || !get_ip_fn)
		return 0;
	backtrace_fn(walk_one, &w);
	return w.n;
}

/* Looks CPython up in the program, once (start-up, or a first CUDA bind:
 * never from a hook's hot path, since a failed dlsym allocates). */
void ft_callsite_init(void)
{
	/* The unwinder's one-time set-up (register table, first lookup of
	 * the loaded objects) happens here, before the program starts threads,
	 * not at its first GPU wait. */
	if (ft_cfg.stack_depth && !backtrace_fn) {
		void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
		if (gcc) {
			get_ip_fn = (_Unwind_Ptr (*)(struct _Unwind_Context *))sym(gcc, "_Unwind_GetIP");
			backtrace_fn = (_Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void *))
				sym(gcc, "_Unwind_Backtrace");
		}
		if (!backtrace_fn || !get_ip_fn)
			ft_log("feedtrace: libgcc_s.so.1 not found: no native stacks at GPU waits");
	}
	if (ft_cfg.stack_depth) {
		void *ip[2];
		stack_ips(ip, 2);
	}
	if (py_ready)
		return;
	void *h = RTLD_DEFAULT;
	py.gil_check = (int (*)(void))sym(h, "PyGILState_Check");
	if (!py.gil_check)
		return;
	py.is_initialized = (int (*)(void))sym(h, "Py_IsInitialized");
	py.this_tstate = (void *(*)(void))sym(h, "PyGILState_GetThisThreadState");
	py.get_frame = (PyObject *(*)(void))sym(h, "PyEval_GetFrame");
	py.frame_code = (PyObject *(*)(PyObject *))sym(h, "PyFrame_GetCode");
	py.frame_line = (int (*)(PyObject *))sym(h, "PyFrame_GetLineNumber");
	py.frame_back = (PyObject *(*)(PyObject *))sym(h, "PyFrame_GetBack");
	py.getattr = (PyObject *(*)(PyObject *, const char *))sym(h, "PyObject_GetAttrString");
	py.map_item = (PyObject *(*)(PyObject *, const char *))sym(h, "PyMapping_GetItemString");
	py.utf8 = (const char *(*)(PyObject *))sym(h, "PyUnicode_AsUTF8");
	py.decref = (void (*)(PyObject *))sym(h, "Py_DecRef");
	py.err_fetch = (void (*)(PyObject **, PyObject **, PyObject **))sym(h, "PyErr_Fetch");
	py.err_restore = (void (*)(PyObject *, PyObject *, PyObject *))sym(h, "PyErr_Restore");
	py_ready = py.is_initialized && py.this_tstate && py.get_frame && py.frame_code && py.frame_line && py.frame_back &&
		   py.getattr && py.map_item && py.utf8 && py.decref && py.err_fetch && py.err_restore;
	int walk = ft_pywalk_init();
	pywalk_ready = walk > 0;
	if (walk < 0)
		py_ready = 0;   /* a layout refused: no Python sites at all */
}


/* "#S:" and the return addresses in hex, innermost first, this frame's
 * own callers included (the converter drops feedtrace's frames). */
uint32_t ft_callsite_native(void)
{
	void *ip[MAX_DEPTH];
	unsigned depth = ft_cfg.stack_depth;
	if (depth == 0)
		return 0;
	if (depth > MAX_DEPTH)
		depth = MAX_DEPTH;
	int n = stack_ips(ip, (int)depth);
	if (n <= 0)
		return 0;
	char text[8 + MAX_DEPTH * 17];
	size_t len = 3;
	memcpy(text, "#S:", 3);
	for (int i = 0; i < n; i++) {
		static const char hex[] = "0123456789abcdef";
		uintptr_t v = (uintptr_t)ip[i];
		char tmp[16];
		int k = 0;
		do {
			tmp[k++] = hex[v & 15];
			v >>= 4;
		} while (v);
		if (i)
			text[len++] = ',';
		while (k)
			text[len++] = tmp[--k];
	}
	text[len] = 0;
	return ft_intern(text);
}

static const char *py_attr(PyObject *o, const char *name, PyObject **hold)
{
	*hold = py.getattr(o, name);
	return *hold ? py.utf8(*hold) : NULL;
}

/* "file:line in func" for the innermost Python frames, ';'-separated.
 * CPython 3.9 and later: read directly, GIL held or not. Others: through
 * the public frame API, only while the calling thread holds the GIL
 * (without it those calls would race the interpreter). */
int ft_callsite_python_on(void)
{
	/* a Python site names the program's files: none under FEEDTRACE_REDACT */
	return (py_ready || pywalk_ready) && ft_cfg.python_frames && !ft_cfg.redact;
}

uint32_t ft_callsite_python(void)
{
	if (!ft_callsite_python_on())
		return 0;
	if (pywalk_ready) {
		char text[1024];
		return ft_pywalk(text, sizeof text, PY_FRAMES) ? ft_intern(text) : 0;
	}
	/* Only in a live interpreter, on a thread with a thread state that
	 * holds the GIL. After Py_Finalize (libcudart's atexit handler unloads
	 * its modules from exit(), past the interpreter's end) PyGILState_Check
	 * answers 1 on any thread, and PyErr_Fetch then crashed CPython 3.12
	 * with SIGSEGV at the end of every PyTorch run on a real GPU. */
	if (!py.is_initialized() || !py.this_tstate() || !py.gil_check())
		return 0;
	PyObject *et, *ev, *tb;
	py.err_fetch(&et, &ev, &tb);          /* our look-ups must not disturb it */
	char text[1024];
	size_t len = 0;
	PyObject *f = py.get_frame();         /* borrowed */
	PyObject *owned = NULL;
	for (int i = 0; f && i < PY_FRAMES; i++) {
		PyObject *code = py.frame_code(f);
		if (!code)
			break;
		PyObject *h1, *h2;
		const char *file = py_attr(code, "co_filename", &h1);
		const char *func = py_attr(code, "co_name", &h2);
		int n = snprintf(text + len, sizeof text - len, "%s%s:%d in %s",
				 i ? ";" : "", file ? file : "?", py.frame_line(f),
				 func ? func : "?");
		if (h1)
			py.decref(h1);
		if (h2)
			py.decref(h2);
		py.decref(code);
		if (n < 0 || (size_t)n >= sizeof text - len)
			break;
		len += (size_t)n;
		PyObject *back = py.frame_back(f);   /* new reference */
		if (owned)
			py.decref(owned);
		owned = back;
		f = back;
	}
	if (owned)
		py.decref(owned);
	py.err_restore(et, ev, tb);
	return len ? ft_intern(text) : 0;
}


/* The name of the threading.Thread that the calling thread is starting,
 * into out (NUL-terminated, cut to cap - 1 bytes); 0 when it is not one.
 * Called from pthread_create (shim/thread.c): CPython's start_new_thread
 * calls it holding the GIL, under Thread.start's frame, whose "self" is
 * the Thread. Its "_name" is what threading calls it ("MainThread",
 * "QueueFeederThread", "Thread-1 (producer)"). Read through the public
 * API, so only while this thread holds the GIL; the pending exception,
 * if any, is left as it was. */
size_t ft_callsite_python_thread(char *out, size_t cap)
{
	out[0] = 0;
	if (!ft_callsite_python_on() || cap < 2 || !py.is_initialized() || !py.this_tstate() ||
	    !py.gil_check())
		return 0;
	PyObject *et, *ev, *tb;
	py.err_fetch(&et, &ev, &tb);
	size_t len = 0;
	PyObject *f = py.get_frame();         /* borrowed */
	PyObject *code = f ? py.frame_code(f) : NULL, *h1 = NULL, *h2 = NULL;
	const char *file = code ? py_attr(code, "co_filename", &h1) : NULL;
	const char *func = code ? py_attr(code, "co_name", &h2) : NULL;
	size_t fl = file ? strlen(file) : 0;
	if (func && strcmp(func, "start") == 0 && fl >= 12 &&
	    strcmp(file + fl - 12, "threading.py") == 0) {
		PyObject *locals = py.getattr(f, "f_locals");
		/* a dict up to 3.12, a proxy of the frame's variables after */
		PyObject *self = locals ? py.map_item(locals, "self") : NULL;
		PyObject *h3 = NULL;
		const char *name = self ? py_attr(self, "_name", &h3) : NULL;
		if (name) {
			len = strnlen(name, cap - 1);
			memcpy(out, name, len);
			out[len] = 0;
		}
		if (h3)
			py.decref(h3);
		if (self)
			py.decref(self);
		if (locals)
			py.decref(locals);
	}
	if (h1)
		py.decref(h1);
	if (h2)
		py.decref(h2);
	if (code)
		py.decref(code);
	py.err_restore(et, ev, tb);
	return len;
}
