/*
 * layout.h: the field layout of a record kind, parsed from its field list
 * in events.def ("fd:i32 path:str req:u32 ..."). One parser for the two
 * sides: the converter decodes every field by it, and the recorder finds
 * the string ids a record names (strrefs.c). Header-only; no allocation.
 */
#ifndef FT_LAYOUT_H
#define FT_LAYOUT_H

#include <stddef.h>
#include <string.h>

enum ft_field_type { FT_F_I32, FT_F_U32, FT_F_X32, FT_F_STR, FT_F_U64, FT_F_I64, FT_F_PTR };

struct ft_layout_field {
	const char *name;        /* into the spec; not NUL-terminated */
	size_t name_len;         /* 1 and "_": padding */
	int type;                /* enum ft_field_type; -1 if unknown */
	unsigned off;            /* byte offset into the record (payload starts at 16) */
	unsigned size;           /* 4 or 8; 0 if the type is unknown */
};

/* Fills at most max fields; returns how many. 8-byte fields are aligned
 * to 8 within the record, as the recorder's structs lay them out. */
static inline int ft_layout_parse(const char *spec, struct ft_layout_field *out, int max)
{
	static const struct { const char *name; int type; unsigned size; } types[] = {
		{"i32", FT_F_I32, 4}, {"u32", FT_F_U32, 4}, {"x32", FT_F_X32, 4},
		{"str", FT_F_STR, 4}, {"u64", FT_F_U64, 8}, {"i64", FT_F_I64, 8},
		{"ptr", FT_F_PTR, 8},
	};
	unsigned off = 16;
	int n = 0;
	const char *p = spec;
	while (p && *p && n < max) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		size_t nl = strcspn(p, ":");
		size_t tl = p[nl] ? strcspn(p + nl + 1, " ") : 0;
		struct ft_layout_field *f = &out[n];
		f->name = p;
		f->name_len = nl;
		f->type = -1;
		f->size = 0;
		for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
			if (strlen(types[i].name) == tl && !memcmp(types[i].name, p + nl + 1, tl)) {
				f->type = types[i].type;
				f->size = types[i].size;
			}
		if (f->size == 8)
			off = (off + 7) & ~7u;
		f->off = off;
		off += f->size;
		n++;
		p += nl + (p[nl] ? 1 + tl : 0);
	}
	return n;
}

#endif
