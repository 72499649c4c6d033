/*
 * events.c: builds the reader's view of every event kind from the one
 * table in libfeedtrace/events.def, parsing each field list once.
 */
#include <string.h>

#include "events.h"

static const struct {
	const char *name;
	unsigned group, nslots;
	const char *fields;
} table[FT_EV_COUNT] = {
	[FT_EV_NONE] = { NULL, 0, 0, NULL },
#define EV(id, nm, grp, ns, flds) [FT_EV_##id] = { nm, grp, ns, flds },
#include "../libfeedtrace/events.def"
#undef EV
};

static struct ft_kind_info kinds[FT_EV_COUNT];
static int built;

static const struct { const char *name; int type; unsigned size; } types[] = {
	{"i32", FT_F_I32, 4}, {"u32", FT_F_U32, 4}, {"x32", FT_F_X32, 4},
	{"str", FT_F_STR, 4}, {"u64", FT_F_U64, 8}, {"i64", FT_F_I64, 8},
	{"ptr", FT_F_PTR, 8},
};

/* "fd:i32 path:str ..." -> fields with offsets (payload starts at byte 16) */
static void parse_fields(struct ft_kind_info *k, const char *spec)
{
	static char names[FT_EV_COUNT][FT_MAX_FIELDS][24];
	unsigned off = 16;
	const char *p = spec;
	while (p && *p && k->nfields < FT_MAX_FIELDS) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, ":");
		size_t tn = strcspn(p + n + 1, " ");
		struct ft_field *f = &k->f[k->nfields];
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
			if (strlen(types[i].name) == tn && !memcmp(types[i].name, p + n + 1, tn)) {
				f->type = types[i].type;
				f->size = types[i].size;
			}
		if (f->size == 8)
			off = (off + 7) & ~7u;
		f->off = off;
		off += f->size;
		if (!(n == 1 && p[0] == '_')) {
			char *dst = names[k - kinds][k->nfields];
			memcpy(dst, p, n < 23 ? n : 23);
			f->name = dst;
		}
		k->nfields++;
		p += n + 1 + tn;
	}
}

static void build(void)
{
	for (unsigned i = 1; i < FT_EV_COUNT; i++) {
		kinds[i].name = table[i].name;
		kinds[i].group = table[i].group;
		kinds[i].nslots = table[i].nslots;
		parse_fields(&kinds[i], table[i].fields);
	}
	built = 1;
}

const struct ft_kind_info *ft_kind(unsigned kind)
{
	if (!built)
		build();
	return kind > 0 && kind < FT_EV_COUNT ? &kinds[kind] : NULL;
}

const struct ft_field *ft_kind_field(const struct ft_kind_info *k, const char *name)
{
	for (int i = 0; k && i < k->nfields; i++)
		if (k->f[i].name && strcmp(k->f[i].name, name) == 0)
			return &k->f[i];
	return NULL;
}

/* ft_field_raw and ft_field_signed are inline in events.h */
