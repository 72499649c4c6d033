/*
 * pyinject.c: puts the Python-side instrumentation (libfeedtrace/python/,
 * installed beside the library as feedtrace-python/) on a Python
 * program's path, so that its sitecustomize runs at the interpreter's
 * start (docs/ARCHITECTURE.md, "PyTorch's loop"). Called once by the
 * constructor, before main: in a process that runs CPython
 * (Py_BytesMain is defined: python3 itself, or a program linked with
 * libpython) and only when FEEDTRACE_PYTORCH is 1, it prepends the
 * directory to PYTHONPATH, which CPython reads after the constructors.
 * The sitecustomize takes it out again at once (os.environ and sys.path
 * as they were), so the program and its children see the variable as it
 * was. Nothing here runs in a hook: the constructor may allocate.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "dlreal.h"
#include "pyinject.h"

#define PYDIR "feedtrace-python"

void ft_pyinject(void)
{
	if (!ft_cfg.pytorch)
		return;
	if (!ft_real_dlsym)
		ft_dl_boot();
	if (!ft_real_dlsym || !ft_real_dlsym(RTLD_DEFAULT, "Py_BytesMain"))
		return;                 /* not a Python process */
	Dl_info di;
	if (!dladdr((void *)ft_pyinject, &di) || !di.dli_fname)
		return;
	char lib[4096];
	if (!realpath(di.dli_fname, lib))
		return;
	const char *slash = strrchr(lib, '/');
	if (!slash)
		return;
	char dir[4096];
	int n = snprintf(dir, sizeof dir, "%.*s/" PYDIR, (int)(slash - lib), lib);
	if (n <= 0 || (size_t)n >= sizeof dir - 32)
		return;
	char probe[4096 + 32];
	snprintf(probe, sizeof probe, "%s/sitecustomize.py", dir);
	if (access(probe, R_OK) != 0)
		return;                 /* the library without its Python part */
	const char *old = getenv("PYTHONPATH");
	if (!old) {
		setenv("PYTHONPATH", dir, 1);
		return;
	}
	/* the sitecustomize strips exactly "DIR:" again; an empty PYTHONPATH
	 * (no entry; "DIR:" would add the working directory) is "DIR:DIR" */
	size_t len = 2 * strlen(dir) + 1 + strlen(old) + 1;
	char *v = malloc(len);
	if (!v)
		return;
	snprintf(v, len, "%s:%s", dir, *old ? old : dir);
	setenv("PYTHONPATH", v, 1);
	free(v);
}
