/*
 * events.c: builds the reader's view of every event kind from the one
 * table in libfeedtrace/format/events.def, parsing each field list once.
 */
#include <string.h>

#include "events.h"

static const struct {
	const char *name;
	unsigned group, cls, nslots;
	const char *fields;
} table[FT_EV_COUNT] = {
	[FT_EV_NONE] = { NULL, 0, 0, 0, NULL },
#define EV(id, num, nm, grp, cls, ns, flds) [FT_EV_##id] = { nm, grp, FT_K_##cls, ns, flds },
#include "events.def"
#undef EV
};

static struct ft_kind_info kinds[FT_EV_COUNT];
static int built;

/* "fd:i32 path:str ..." -> fields with offsets (libfeedtrace/format/layout.h) */
static void parse_fields(struct ft_kind_info *k, const char *spec)
{
	static char names[FT_EV_COUNT][FT_MAX_FIELDS][24];
	struct ft_layout_field lf[FT_MAX_FIELDS];
	int n = ft_layout_parse(spec, lf, FT_MAX_FIELDS);
	for (int i = 0; i < n; i++) {
		struct ft_field *f = &k->f[i];
		f->type = lf[i].type < 0 ? 0 : lf[i].type;
		f->size = lf[i].size;
		f->off = lf[i].off;
		if (!(lf[i].name_len == 1 && lf[i].name[0] == '_')) {
			char *dst = names[k - kinds][i];
			memcpy(dst, lf[i].name, lf[i].name_len < 23 ? lf[i].name_len : 23);
			f->name = dst;
		}
	}
	k->nfields = n;
}

static void build(void)
{
	for (unsigned i = 1; i < FT_EV_COUNT; i++) {
		kinds[i].name = table[i].name;
		kinds[i].group = table[i].group;
		kinds[i].cls = table[i].cls;
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
