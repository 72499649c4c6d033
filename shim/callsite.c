/*
 * callsite.c: where a wait on the GPU came from. At explicit waits and
 * hidden syncs only (never at submissions): the native stack as return
 * addresses (libunwind, FEEDTRACE_STACK_DEPTH frames, interned as one
 * "#S:" string; the flusher symbolises it later), and, when the calling
 * thread runs Python and holds the GIL, its innermost Python frames
 * (file:line in function), read through CPython's public C API found at
 * start-up in the running program: no link against libpython, nothing
 * done for programs that are not Python.
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <stdio.h>
#include <string.h>

#include "../libfeedtrace/config.h"
#include "../libfeedtrace/recorder.h"

#define MAX_DEPTH 32
#define PY_FRAMES 3

typedef struct _object PyObject;

static struct {
	int (*gil_check)(void);
	PyObject *(*get_frame)(void);
	PyObject *(*frame_code)(PyObject *);
	int (*frame_line)(PyObject *);
	PyObject *(*frame_back)(PyObject *);
	PyObject *(*getattr)(PyObject *, const char *);
	const char *(*utf8)(PyObject *);
	void (*decref)(PyObject *);
	void (*err_fetch)(PyObject **, PyObject **, PyObject **);
	void (*err_restore)(PyObject *, PyObject *, PyObject *);
} py;
static int py_ready;

/* Looks CPython up in the program, once (start-up, or a first CUDA bind:
 * never from a hook's hot path, since a failed dlsym allocates). */
void ft_callsite_init(void)
{
	if (py_ready)
		return;
	void *h = RTLD_DEFAULT;
	py.gil_check = (int (*)(void))dlsym(h, "PyGILState_Check");
	if (!py.gil_check)
		return;
	py.get_frame = (PyObject *(*)(void))dlsym(h, "PyEval_GetFrame");
	py.frame_code = (PyObject *(*)(PyObject *))dlsym(h, "PyFrame_GetCode");
	py.frame_line = (int (*)(PyObject *))dlsym(h, "PyFrame_GetLineNumber");
	py.frame_back = (PyObject *(*)(PyObject *))dlsym(h, "PyFrame_GetBack");
	py.getattr = (PyObject *(*)(PyObject *, const char *))dlsym(h, "PyObject_GetAttrString");
	py.utf8 = (const char *(*)(PyObject *))dlsym(h, "PyUnicode_AsUTF8");
	py.decref = (void (*)(PyObject *))dlsym(h, "Py_DecRef");
	py.err_fetch = (void (*)(PyObject **, PyObject **, PyObject **))dlsym(h, "PyErr_Fetch");
	py.err_restore = (void (*)(PyObject *, PyObject *, PyObject *))dlsym(h, "PyErr_Restore");
	py_ready = py.get_frame && py.frame_code && py.frame_line && py.frame_back &&
		   py.getattr && py.utf8 && py.decref && py.err_fetch && py.err_restore;
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
	int n = unw_backtrace(ip, (int)depth);
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
 * Only while the calling thread holds the GIL: without it the frames
 * cannot be read through the public API without racing the interpreter
 * (PyTorch releases the GIL around most operations; those waits keep
 * their native stack only). */
uint32_t ft_callsite_python(void)
{
	if (!py_ready || !ft_cfg.python_frames || !py.gil_check())
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

