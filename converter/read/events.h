/*
 * events.h: the event table (libfeedtrace/format/events.def) seen from the
 * reader's side: each kind's name, group, class and decoded field layout.
 */
#ifndef FT_EVENTS_H
#define FT_EVENTS_H

#include <stdint.h>
#include <string.h>

#include "format.h"
#include "layout.h"

#define FT_MAX_FIELDS 12

/* the classes of events.def's CLASS column (its header says what each
 * holds); the analyses' facts of a kind follow from its class (evfacts.c) */
#define FT_KCLASSES(X) \
	X(FILE, "file") X(OPEN, "open") X(READ, "read") X(URING, "uring") \
	X(LOCK, "lock") X(DATA_WAIT, "data wait") X(COND, "condition wait") \
	X(SEM, "semaphore wait") X(HANDOVER, "handover") X(PROCESS, "process") \
	X(RANGE, "range") X(CUDA, "cuda") X(LAUNCH, "launch") \
	X(COLLECTIVE, "collective") X(GLOO, "gloo collective")
enum ft_kclass {
	FT_K_NONE,
#define FT_KC_ENUM(c, word) FT_K_##c,
	FT_KCLASSES(FT_KC_ENUM)
#undef FT_KC_ENUM
	FT_K_N
};

struct ft_field {
	const char *name;      /* NULL for padding */
	int type;              /* enum ft_field_type */
	unsigned off;          /* byte offset into the record */
	unsigned size;         /* 4 or 8 */
};

struct ft_kind_info {
	const char *name;
	unsigned group;
	unsigned cls;          /* enum ft_kclass */
	unsigned nslots;
	int nfields;
	struct ft_field f[FT_MAX_FIELDS];
};

/* NULL for a kind this reader does not know */
const struct ft_kind_info *ft_kind(unsigned kind);
/* Field by name, or NULL */
const struct ft_field *ft_kind_field(const struct ft_kind_info *k, const char *name);
/* Raw value of a field of a record (nslots contiguous slots) */
/* (inline: the analyses read several fields of every event) */
/* A field past the record's own slots reads 0: a record written before
 * fields were added at its end (lock waits had one slot before they
 * carried a call site) reads with them absent. */
static inline uint64_t ft_field_raw(const struct ft_rec *r, const struct ft_field *f)
{
	const unsigned char *b = (const unsigned char *)r;
	if (f->off + f->size > (unsigned)r->nslots * sizeof *r)
		return 0;
	if (f->size == 8) {
		uint64_t v;
		memcpy(&v, b + f->off, 8);
		return v;
	}
	uint32_t v;
	memcpy(&v, b + f->off, 4);
	return v;
}

static inline int64_t ft_field_signed(const struct ft_rec *r, const struct ft_field *f)
{
	uint64_t v = ft_field_raw(r, f);
	return f->size == 4 ? (int64_t)(int32_t)(uint32_t)v : (int64_t)v;
}

#endif
