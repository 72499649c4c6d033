/*
 * shape.h: the body most wrappers share, written once. TIMED defines the
 * wrapper name(params): with its hook group off (or the thread refused) it
 * is the real call; else the real call between two clock reads, then
 * record (a statement that may use t, t0, the result r and the call's
 * errno e), and the program gets r and e back untouched. The families of
 * io.c and wait.c say only what they record; wrappers whose hot path must
 * not read errno (reads, lock waits) keep bodies of their own.
 */
#ifndef FT_SHAPE_H
#define FT_SHAPE_H

#include <errno.h>

#include "real.h"
#include "../libfeedtrace/recorder.h"

#define TIMED(type, name, group, params, args, record)                 \
	type name params                                                \
	{                                                               \
		struct ft_thread *t = ft_enter(group);                  \
		if (!t)                                                 \
			return REAL(name) args;                         \
		uint64_t t0 = ft_now();                                 \
		type r = REAL(name) args;                               \
		int e = errno;                                          \
		record;                                                 \
		errno = e;                                              \
		return r;                                               \
	}

#endif
