/* pfarg.h - a timeline argument as the Perfetto writer (pftrace.h) takes
 * it: a name and a typed value. Its own header, below the writer, so that
 * a finding kind's ops (fkind.h: args) fill them without the writer. */
#ifndef PFARG_H
#define PFARG_H

#include <stdint.h>

enum pf_kind { PF_UINT, PF_INT, PF_DOUBLE, PF_STRING, PF_BOOL, PF_POINTER };

/* A debug annotation ("arg") attached to an event. String names and
 * PF_STRING values are interned. */
struct pf_arg {
	const char *name;
	int kind; /* enum pf_kind */
	union {
		uint64_t u;    /* PF_UINT, PF_POINTER */
		int64_t i;     /* PF_INT */
		double d;      /* PF_DOUBLE */
		const char *s; /* PF_STRING (NULL is written as "") */
		int b;         /* PF_BOOL */
	} v;
};

#define PF_ARG_UINT(n, x) ((struct pf_arg){ .name = (n), .kind = PF_UINT, .v.u = (x) })
#define PF_ARG_INT(n, x) ((struct pf_arg){ .name = (n), .kind = PF_INT, .v.i = (x) })
#define PF_ARG_DOUBLE(n, x) ((struct pf_arg){ .name = (n), .kind = PF_DOUBLE, .v.d = (x) })
#define PF_ARG_STR(n, x) ((struct pf_arg){ .name = (n), .kind = PF_STRING, .v.s = (x) })
#define PF_ARG_BOOL(n, x) ((struct pf_arg){ .name = (n), .kind = PF_BOOL, .v.b = (x) })
#define PF_ARG_PTR(n, x) ((struct pf_arg){ .name = (n), .kind = PF_POINTER, .v.u = (x) })

#endif
