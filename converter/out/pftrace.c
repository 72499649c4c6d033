/* pftrace.c - streaming writer of Perfetto protobuf traces (.pftrace).
 * Appends one TracePacket per call to the file as a Trace.packet field;
 * interns names and string values per sequence.
 *
 * The schema is converter/perfetto.proto, compiled by protoc-c. Rare
 * packets (clock snapshots, track descriptors) and every InternedData
 * message are packed by protobuf-c. TrackEvent packets, two or more per
 * traced call, are encoded here (encode_event), because protobuf-c's
 * generic packer walks every field descriptor of TracePacket, TrackEvent
 * and each DebugAnnotation twice (get_packed_size, then pack): measured at
 * ~0.5 us per packet, it held conversion to ~0.4 M events/s. The encoder
 * takes every field number and wire type from the protoc-c descriptors at
 * run time (fast_init), so the .proto stays the only place they are
 * written down; it refuses (falling back to protobuf-c for everything) if
 * a field it writes changed type or order. It writes fields in field-number
 * order with minimal varints, exactly as protobuf-c does: with
 * FEEDTRACE_PFTRACE_VERIFY=1 in the environment every event packet is also
 * packed by protobuf-c and the two must be byte-identical (the tests run
 * the converter so).
 *
 * Per traced call (a BEGIN and an END) the common cases take short paths:
 * emit_fast for a stable event whose strings are all interned already
 * (pointer-cache hits only, encoded in place in the output buffer), and
 * emit_end for an END (a per-track constant suffix after the timestamp).
 * The event clock is the sequence's default (TracePacketDefaults, sent on
 * every packet that clears the incremental state), so event packets do
 * not repeat timestamp_clock_id. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "pftrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto.pb-c.h"
#include "util.h"

#define SEQ_ID 1              /* our one trusted_packet_sequence_id */
#define FLAG_CLEARED 1        /* INCREMENTAL_STATE_CLEARED */
#define FLAG_NEEDS 2          /* NEEDS_INCREMENTAL_STATE */
#define TRACE_PACKET_TAG 0x0a /* field 1, wire type 2 (length-delimited) */
#define OUT_CAP (256u << 10)  /* file output buffer: stays in L2 until written */
/* The event encoder is inlined into its callers, which then specialise it
 * (emit_fast: no intern entries, no clear, not the first packet). */
#define ALWAYS_INLINE __attribute__((always_inline))

/* ------------------------------------------------------------------------
 * Intern table: string -> iid, open addressing with linear probing. Keys
 * are owned copies. iids count from 1 and restart after a clear. A small
 * direct-mapped cache keyed by the caller's pointer answers repeated
 * lookups of the same string (kind names, field names, the reader's
 * string table) without hashing it; a hit is confirmed by strcmp, since a
 * caller may reuse a buffer for other text (or trusted by address for a
 * stable event: see intern).
 * ---------------------------------------------------------------------- */

#define PCACHE 1024          /* entries: event and argument names */
#define PCACHE_STRINGS 16384 /* string values: > a typical run's paths */

struct pcache_ent {
	const char *ptr; /* the caller's pointer */
	const char *key; /* our copy */
	uint64_t iid;
	uint32_t gen; /* the table's gen when cached */
	int stable;   /* cached by a stable lookup (struct pf_event.stable) */
};

struct intern_table {
	char **keys;
	uint64_t *iids;
	uint64_t *hashes; /* each key's hash_str: growth never rehashes */
	uint32_t cap;     /* power of two, or 0 */
	uint32_t count;
	uint64_t next_iid;
	uint32_t gen;          /* bumped by every clear: stale cache entries */
	struct pcache_ent *pc; /* pc_mask + 1 entries, or NULL */
	uint32_t pc_mask;      /* PCACHE or PCACHE_STRINGS, less 1 (< 2^24) */
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

static void intern_clear(struct intern_table *t)
{
	for (uint32_t i = 0; i < t->cap; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->iids);
	free(t->hashes);
	t->keys = NULL;
	t->iids = NULL;
	t->hashes = NULL;
	t->cap = t->count = 0;
	t->next_iid = 0;
	t->gen++;
}

static void intern_free(struct intern_table *t)
{
	intern_clear(t);
	free(t->pc);
	t->pc = NULL;
}

static int intern_grow(struct intern_table *t)
{
	uint32_t ncap = t->cap ? t->cap * 2 : 64;
	char **keys = calloc(ncap, sizeof(*keys));
	uint64_t *iids = calloc(ncap, sizeof(*iids));
	uint64_t *hashes = calloc(ncap, sizeof(*hashes));
	if (!keys || !iids || !hashes) {
		free(keys);
		free(iids);
		free(hashes);
		return -1;
	}
	for (uint32_t i = 0; i < t->cap; i++) {
		if (!t->keys[i])
			continue;
		uint32_t j = (uint32_t)t->hashes[i] & (ncap - 1);
		while (keys[j])
			j = (j + 1) & (ncap - 1);
		keys[j] = t->keys[i];
		iids[j] = t->iids[i];
		hashes[j] = t->hashes[i];
	}
	free(t->keys);
	free(t->iids);
	free(t->hashes);
	t->keys = keys;
	t->iids = iids;
	t->hashes = hashes;
	t->cap = ncap;
	return 0;
}

/* Returns the iid of s, adding it if absent (then *key is set to the stored
 * copy, else to NULL). Returns 0 when out of memory. */
static uint64_t intern_slow(struct intern_table *t, const char *s, const char **key,
			    const char **stored)
{
	*key = NULL;
	if ((t->count + 1) * 2 > t->cap && intern_grow(t) < 0)
		return 0;
	uint64_t h = hash_str(s);
	uint32_t j = (uint32_t)h & (t->cap - 1);
	while (t->keys[j]) {
		if (t->hashes[j] == h && strcmp(t->keys[j], s) == 0) {
			*stored = t->keys[j];
			return t->iids[j];
		}
		j = (j + 1) & (t->cap - 1);
	}
	if (!(t->keys[j] = strdup(s)))
		return 0;
	t->hashes[j] = h;
	if (t->next_iid == 0)
		t->next_iid = 1;
	t->iids[j] = t->next_iid++;
	t->count++;
	*key = *stored = t->keys[j];
	return t->iids[j];
}

/* The cache entry of a caller's pointer (multiplicative hashing: the
 * pointers of a string table spread over the whole cache). */
static inline struct pcache_ent *pcache_slot(struct intern_table *t, const char *s)
{
	uint64_t h = (uint64_t)(uintptr_t)s * 0x9e3779b97f4a7c15ull;
	return &t->pc[(h >> 40) & t->pc_mask];
}

/* Whether cache entry e holds s (stable: trusted by address, see intern). */
static inline int pcache_is(const struct intern_table *t, const struct pcache_ent *e, const char *s,
			    int stable)
{
	return e->ptr == s && e->gen == t->gen && ((stable && e->stable) || strcmp(e->key, s) == 0);
}

static uint64_t intern_miss(struct intern_table *t, const char *s, const char **key, int stable,
			    struct pcache_ent *e)
{
	const char *stored = NULL;
	uint64_t iid = intern_slow(t, s, key, &stored);
	if (iid && e) {
		e->ptr = s;
		e->key = stored;
		e->iid = iid;
		e->gen = t->gen;
		e->stable = stable;
	}
	return iid;
}

/* stable: s keeps its text at its address until pf_close; an entry cached
 * by such a lookup is then trusted without comparing (an entry cached from
 * a buffer that was later freed and reused is never trusted so). The
 * cache hit is inline: it runs several times per event. */
static inline uint64_t intern(struct intern_table *t, const char *s, const char **key, int stable)
{
	struct pcache_ent *e = NULL;
	if (t->pc || (t->pc = calloc((size_t)t->pc_mask + 1, sizeof(*t->pc)))) {
		e = pcache_slot(t, s);
		if (pcache_is(t, e, s, stable)) {
			*key = NULL;
			return e->iid;
		}
	}
	return intern_miss(t, s, key, stable, e);
}

/* ------------------------------------------------------------------------
 * Wire encoding helpers (the encoder proper is encode_event below).
 * ---------------------------------------------------------------------- */

static inline size_t varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline uint8_t *put_fixed64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + 8;
}

/* A field's key (number << 3 | wire type), varint-encoded. */
struct ftag {
	uint8_t b[8]; /* the key's bytes (at most 5), zero-padded */
	uint8_t n;
	uint32_t id;
};

static inline uint8_t *put_tag(uint8_t *p, const struct ftag *t)
{
	memcpy(p, t->b, 8); /* the buffer always has room for 8 */
	return p + t->n;
}

/* Keys of the fields encode_event writes, from the protoc-c descriptors. */
static struct fast_tags {
	int ok; /* 1 usable, -1 refused, 0 not yet */
	struct ftag pkt_ts, pkt_seq, pkt_te, pkt_id, pkt_flags, pkt_clock, pkt_defaults, pkt_first,
		def_clock;
	struct ftag te_ann, te_type, te_name_iid, te_track, te_cval, te_dval, te_flow, te_tflow;
	struct ftag da_name_iid, da_bool, da_uint, da_int, da_double, da_ptr, da_siid;
	/* Non-zero where te_ann's and da_name_iid's keys take one byte each (on
	 * a little-endian machine): those keys with a 0 length byte between,
	 * as the low three bytes of a 32-bit store (emit_fast). */
	uint32_t ann_hdr;
} FT;

enum wire { W_VARINT = 0, W_FIXED64 = 1, W_LEN = 2 };

/* Looks name up in d: it must be a singular (or, with rep, an unpacked
 * repeated) field of wire type w. Returns 0 and fills t, or -1. */
static int fast_tag(const ProtobufCMessageDescriptor *d, const char *name, int w, int rep,
		    struct ftag *t)
{
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field_by_name(d, name);
	if (!f)
		return -1;
	int fw;
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_BOOL:
	case PROTOBUF_C_TYPE_ENUM: fw = W_VARINT; break;
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_DOUBLE: fw = W_FIXED64; break;
	case PROTOBUF_C_TYPE_MESSAGE:
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES: fw = W_LEN; break;
	default: return -1;
	}
	/* int32 would need sign extension to 10 bytes; we write none */
	if (fw != w || f->type == PROTOBUF_C_TYPE_INT32)
		return -1;
	if (rep ? (f->label != PROTOBUF_C_LABEL_REPEATED ||
		   (f->flags & PROTOBUF_C_FIELD_FLAG_PACKED))
		: f->label == PROTOBUF_C_LABEL_REPEATED)
		return -1;
	memset(t, 0, sizeof(*t));
	t->id = f->id;
	t->n = (uint8_t)(put_varint(t->b, ((uint64_t)f->id << 3) | (unsigned)w) - t->b);
	return 0;
}

/* Fields must ascend in the order encode_event writes them, as protobuf-c
 * orders them, for the output to be identical to protobuf-c's. */
static int ascending(const struct ftag *const *t, int n)
{
	for (int i = 1; i < n; i++)
		if (t[i]->id <= t[i - 1]->id)
			return 0;
	return 1;
}

static void fast_init(void)
{
	const ProtobufCMessageDescriptor *pd = &perfetto__protos__trace_packet__descriptor,
					 *td = &perfetto__protos__track_event__descriptor,
					 *ad = &perfetto__protos__debug_annotation__descriptor,
					 *dd = &perfetto__protos__trace_packet_defaults__descriptor;
	struct fast_tags *t = &FT;
	int bad = fast_tag(pd, "timestamp", W_VARINT, 0, &t->pkt_ts) |
		  fast_tag(pd, "trusted_packet_sequence_id", W_VARINT, 0, &t->pkt_seq) |
		  fast_tag(pd, "track_event", W_LEN, 0, &t->pkt_te) |
		  fast_tag(pd, "interned_data", W_LEN, 0, &t->pkt_id) |
		  fast_tag(pd, "sequence_flags", W_VARINT, 0, &t->pkt_flags) |
		  fast_tag(pd, "timestamp_clock_id", W_VARINT, 0, &t->pkt_clock) |
		  fast_tag(pd, "trace_packet_defaults", W_LEN, 0, &t->pkt_defaults) |
		  fast_tag(pd, "first_packet_on_sequence", W_VARINT, 0, &t->pkt_first) |
		  fast_tag(dd, "timestamp_clock_id", W_VARINT, 0, &t->def_clock) |
		  fast_tag(td, "debug_annotations", W_LEN, 1, &t->te_ann) |
		  fast_tag(td, "type", W_VARINT, 0, &t->te_type) |
		  fast_tag(td, "name_iid", W_VARINT, 0, &t->te_name_iid) |
		  fast_tag(td, "track_uuid", W_VARINT, 0, &t->te_track) |
		  fast_tag(td, "counter_value", W_VARINT, 0, &t->te_cval) |
		  fast_tag(td, "double_counter_value", W_FIXED64, 0, &t->te_dval) |
		  fast_tag(td, "flow_ids", W_FIXED64, 1, &t->te_flow) |
		  fast_tag(td, "terminating_flow_ids", W_FIXED64, 1, &t->te_tflow) |
		  fast_tag(ad, "name_iid", W_VARINT, 0, &t->da_name_iid) |
		  fast_tag(ad, "bool_value", W_VARINT, 0, &t->da_bool) |
		  fast_tag(ad, "uint_value", W_VARINT, 0, &t->da_uint) |
		  fast_tag(ad, "int_value", W_VARINT, 0, &t->da_int) |
		  fast_tag(ad, "double_value", W_FIXED64, 0, &t->da_double) |
		  fast_tag(ad, "pointer_value", W_VARINT, 0, &t->da_ptr) |
		  fast_tag(ad, "string_value_iid", W_VARINT, 0, &t->da_siid);
	const struct ftag *pkt[] = {
		&t->pkt_ts,    &t->pkt_seq,   &t->pkt_te,       &t->pkt_id,
		&t->pkt_flags, &t->pkt_clock, &t->pkt_defaults, &t->pkt_first
	};
	const struct ftag *te[] = { &t->te_ann,  &t->te_type, &t->te_name_iid, &t->te_track,
				    &t->te_cval, &t->te_dval, &t->te_flow,     &t->te_tflow };
	const struct ftag *da[] = { &t->da_name_iid, &t->da_bool, &t->da_uint, &t->da_int,
				    &t->da_double,   &t->da_ptr,  &t->da_siid };
	if (bad || !ascending(pkt, 8) || !ascending(te, 8) || !ascending(da, 7))
		t->ok = -1;
	else
		t->ok = 1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (t->ok > 0 && t->te_ann.n == 1 && t->da_name_iid.n == 1)
		t->ann_hdr = t->te_ann.b[0] | (uint32_t)t->da_name_iid.b[0] << 16;
#endif
}

/* ------------------------------------------------------------------------
 * Writer state.
 * ---------------------------------------------------------------------- */

enum { TK_PROCESS = 1, TK_THREAD, TK_CHILD, TK_COUNTER };

struct track {
	unsigned char kind;
	uint32_t depth; /* open slices */
	/* The bytes of this track's SLICE_END packets after the timestamp,
	 * which never change on a sequence past its first packet (end_len 0:
	 * not made yet; remade when the clock id changes). */
	uint8_t end_len;
	uint32_t end_clock;
	uint8_t end_sfx[48];
};

struct pf_writer {
	FILE *fp;
	int err;           /* a write failed: sticky */
	int need_clear;    /* next packet is flagged CLEARED|NEEDS */
	int first;         /* no packet written yet */
	int fast;          /* encode_event may be used */
	int verify;        /* FEEDTRACE_PFTRACE_VERIFY: compare with protobuf-c */
	uint32_t clock_id; /* the sequence's default clock after a clear */
	Perfetto__Protos__TracePacketDefaults defaults; /* set_seq_fields' */
	uint32_t intern_limit;
	struct intern_table names, arg_names, strings;
	struct track *tracks; /* tracks[uuid - 1]: the writer's uuids, 1, 2, 3... */
	uint64_t ntracks, tracks_cap;
	struct ft_map ids;    /* the caller's track id -> uuid - 1 */
	uint8_t *out; /* packets not yet written to fp */
	size_t out_len, out_cap;
	uint8_t *ref; /* verify: protobuf-c's packing */
	size_t ref_cap;
	/* Per-event scratch, grown to the largest nargs seen. */
	int scratch_cap;
	Perfetto__Protos__DebugAnnotation *ann;
	Perfetto__Protos__DebugAnnotation **ann_p;
	Perfetto__Protos__DebugAnnotationName *dan;
	Perfetto__Protos__DebugAnnotationName **dan_p;
	Perfetto__Protos__InternedString *istr;
	Perfetto__Protos__InternedString **istr_p;
	uint64_t *arg_iid, *str_iid; /* per arg: name iid, string value iid */
	struct pf_stats st;
};

struct pf_writer *pf_open(const char *path)
{
	struct pf_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	if (!(w->out = malloc(OUT_CAP))) {
		free(w);
		return NULL;
	}
	w->out_cap = OUT_CAP;
	if (!(w->fp = fopen(path, "wb"))) {
		free(w->out);
		free(w);
		return NULL;
	}
	if (!FT.ok)
		fast_init();
	w->fast = FT.ok > 0;
	const char *v = getenv("FEEDTRACE_PFTRACE_VERIFY");
	w->verify = v && *v && strcmp(v, "0") != 0;
	w->need_clear = 1;
	w->first = 1;
	w->clock_id = PF_CLOCK_BOOTTIME;
	w->intern_limit = PF_INTERN_LIMIT_DEFAULT;
	w->names.pc_mask = w->arg_names.pc_mask = PCACHE - 1;
	w->strings.pc_mask = PCACHE_STRINGS - 1;
	return w;
}

/* Writes out the buffered packets. */
static int flush_out(struct pf_writer *w)
{
	if (w->out_len && !w->err && fwrite(w->out, 1, w->out_len, w->fp) != w->out_len)
		w->err = 1;
	w->out_len = 0;
	return w->err ? -1 : 0;
}

/* Room for n more bytes in w->out (plus slack for put_tag): the buffer
 * is full (written out, or grown for a packet larger than it). */
static int reserve_slow(struct pf_writer *w, size_t n)
{
	if (flush_out(w) < 0)
		return -1;
	if (n > w->out_cap) {
		uint8_t *b = realloc(w->out, n);
		if (!b) {
			w->err = 1;
			return -1;
		}
		w->out = b;
		w->out_cap = n;
	}
	return 0;
}

/* Room for n more bytes in w->out (plus slack for put_tag). */
static inline int reserve(struct pf_writer *w, size_t n)
{
	n += 16;
	if (w->out_len + n <= w->out_cap)
		return 0;
	return reserve_slow(w, n);
}

int pf_close(struct pf_writer *w)
{
	if (!w)
		return -1;
	flush_out(w);
	int err = w->err;
	if (fflush(w->fp) != 0 || ferror(w->fp))
		err = 1;
	if (fclose(w->fp) != 0)
		err = 1;
	intern_free(&w->names);
	intern_free(&w->arg_names);
	intern_free(&w->strings);
	free(w->tracks);
	ft_map_free(&w->ids);
	free(w->out);
	free(w->ref);
	free(w->ann);
	free(w->ann_p);
	free(w->dan);
	free(w->dan_p);
	free(w->istr);
	free(w->istr_p);
	free(w->arg_iid);
	free(w->str_iid);
	free(w);
	return err ? -1 : 0;
}

void pf_set_clock(struct pf_writer *w, uint32_t clock_id)
{
	if (clock_id == w->clock_id)
		return;
	w->clock_id = clock_id;
	/* The clock is the sequence's default (TracePacketDefaults), which is
	 * incremental state: restart the sequence so that the next packet
	 * carries it. Nothing interned survives a clear. */
	intern_clear(&w->names);
	intern_clear(&w->arg_names);
	intern_clear(&w->strings);
	w->need_clear = 1;
}

void pf_set_intern_limit(struct pf_writer *w, uint32_t n)
{
	w->intern_limit = n ? n : PF_INTERN_LIMIT_DEFAULT;
}

void pf_get_stats(const struct pf_writer *w, struct pf_stats *st)
{
	*st = w->st;
}

/* The sequence fields of the next packet; advances the sequence state. */
static void next_seq_fields(struct pf_writer *w, uint32_t *flags, int *first)
{
	*flags = FLAG_NEEDS;
	if (w->need_clear) {
		*flags |= FLAG_CLEARED;
		w->need_clear = 0;
	}
	*first = w->first;
	w->first = 0;
}

/* Whether a packet with these sequence flags sends the writer's clock as
 * the sequence's default (TracePacketDefaults: only where the incremental
 * state is cleared; BOOTTIME is Perfetto's default already). Event packets
 * name their clock only there; every later one takes the default. */
static inline int sends_defaults(const struct pf_writer *w, uint32_t flags)
{
	return (flags & FLAG_CLEARED) && w->clock_id != PF_CLOCK_BOOTTIME;
}

static void set_seq_fields(struct pf_writer *w, Perfetto__Protos__TracePacket *p, uint32_t flags,
			   int first)
{
	p->has_trusted_packet_sequence_id = 1;
	p->trusted_packet_sequence_id = SEQ_ID;
	p->has_sequence_flags = 1;
	p->sequence_flags = flags;
	if (first) {
		p->has_first_packet_on_sequence = 1;
		p->first_packet_on_sequence = 1;
	}
	if (sends_defaults(w, flags)) {
		perfetto__protos__trace_packet_defaults__init(&w->defaults);
		w->defaults.has_timestamp_clock_id = 1;
		w->defaults.timestamp_clock_id = w->clock_id;
		p->trace_packet_defaults = &w->defaults;
	}
}

/* Packs p with protobuf-c as a Trace.packet field into dst (room for
 * len + 11 bytes); returns the bytes written. */
static size_t pack_generic(const Perfetto__Protos__TracePacket *p, size_t len, uint8_t *dst)
{
	uint8_t *q = dst;
	*q++ = TRACE_PACKET_TAG;
	q = put_varint(q, len);
	perfetto__protos__trace_packet__pack(p, q);
	return (size_t)(q - dst) + len;
}

/* Sets the sequence fields, packs p with protobuf-c and appends it. */
static int write_packet(struct pf_writer *w, Perfetto__Protos__TracePacket *p)
{
	if (w->err)
		return -1;
	uint32_t flags;
	int first;
	next_seq_fields(w, &flags, &first);
	set_seq_fields(w, p, flags, first);
	/* these packets' timestamps are BOOTTIME: say so where the sequence's
	 * default is another clock */
	if (p->has_timestamp && !p->has_timestamp_clock_id && w->clock_id != PF_CLOCK_BOOTTIME) {
		p->has_timestamp_clock_id = 1;
		p->timestamp_clock_id = PF_CLOCK_BOOTTIME;
	}
	size_t len = perfetto__protos__trace_packet__get_packed_size(p);
	if (reserve(w, len + 11) < 0)
		return -1;
	size_t n = pack_generic(p, len, w->out + w->out_len);
	w->out_len += n;
	w->st.packets++;
	w->st.bytes += n;
	return 0;
}

int pf_clock_snapshot(struct pf_writer *w, uint64_t boottime_ns, uint64_t realtime_ns,
		      uint64_t monotonic_ns)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c[3], *cp[3];
	uint32_t ids[3] = { PF_CLOCK_BOOTTIME, PF_CLOCK_REALTIME, PF_CLOCK_MONOTONIC };
	uint64_t ts[3] = { boottime_ns, realtime_ns, monotonic_ns };
	size_t n = 0;

	for (int i = 0; i < 3; i++) {
		if (i > 0 && ts[i] == 0)
			continue;
		perfetto__protos__clock_snapshot__clock__init(&c[n]);
		c[n].has_clock_id = 1;
		c[n].clock_id = ids[i];
		c[n].has_timestamp = 1;
		c[n].timestamp = ts[i];
		cp[n] = &c[n];
		n++;
	}
	cs.n_clocks = n;
	cs.clocks = cp;
	p.has_timestamp = 1;
	p.timestamp = boottime_ns;
	p.clock_snapshot = &cs;
	return write_packet(w, &p);
}

int pf_process_tree(struct pf_writer *w, uint64_t ts, int n, const int32_t *pid,
		    const int32_t *ppid, const char *const *argv, int argc)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__ProcessTree pt = PERFETTO__PROTOS__PROCESS_TREE__INIT;
	if (n <= 0)
		return 0;
	Perfetto__Protos__ProcessTree__Process *pr = calloc((size_t)n, sizeof *pr);
	Perfetto__Protos__ProcessTree__Process **pp = calloc((size_t)n, sizeof *pp);
	if (!pr || !pp) {
		free(pr);
		free(pp);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		perfetto__protos__process_tree__process__init(&pr[i]);
		pr[i].has_pid = 1;
		pr[i].pid = pid[i];
		pr[i].has_ppid = ppid[i] > 0;
		pr[i].ppid = ppid[i];
		pr[i].n_cmdline = argv ? (size_t)argc : 0;
		pr[i].cmdline = argv ? (char **)&argv[(size_t)i * (size_t)argc] : NULL;
		pp[i] = &pr[i];
	}
	pt.n_processes = (size_t)n;
	pt.processes = pp;
	p.has_timestamp = 1;
	p.timestamp = ts;
	p.process_tree = &pt;
	int r = write_packet(w, &p);
	free(pr);
	free(pp);
	return r;
}

/* ------------------------------------------------------------------------
 * Tracks.
 * ---------------------------------------------------------------------- */

uint64_t pf_id(uint64_t kind, uint64_t a, uint64_t b)
{
	uint64_t h = kind * 0x9e3779b97f4a7c15ull;
	h = (h ^ a) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ (h >> 31) ^ b) * 0x94d049bb133111ebull;
	h ^= h >> 29;
	return h ? h : 1;
}

/* The writer's own uuid of the caller's track id (0: not declared). */
static uint64_t uuid_of(const struct pf_writer *w, uint64_t id)
{
	long i = ft_map_get(&w->ids, id);
	return i < 0 ? 0 : (uint64_t)i + 1;
}

static struct track *get_track(struct pf_writer *w, uint64_t uuid)
{
	return (uuid >= 1 && uuid <= w->ntracks) ? &w->tracks[uuid - 1] : NULL;
}

/* The writer's uuid of a parent id: a declared track that is not a counter;
 * 0 if not. */
static uint64_t parent_uuid(struct pf_writer *w, uint64_t id)
{
	uint64_t u = uuid_of(w, id);
	struct track *t = get_track(w, u);
	return t && t->kind && t->kind != TK_COUNTER ? u : 0;
}

/* Reserves the next uuid for track id (not yet declared) of the given
 * kind; 0 on error. */
static uint64_t new_track(struct pf_writer *w, uint64_t id, int kind)
{
	if (w->err || !id || uuid_of(w, id))
		return 0;
	if (w->ntracks == w->tracks_cap) {
		uint64_t cap = w->tracks_cap ? w->tracks_cap * 2 : 16;
		struct track *t = realloc(w->tracks, cap * sizeof(*t));
		if (!t)
			return 0;
		w->tracks = t;
		w->tracks_cap = cap;
	}
	memset(&w->tracks[w->ntracks], 0, sizeof(w->tracks[w->ntracks]));
	w->tracks[w->ntracks].kind = (unsigned char)kind;
	ft_map_put(&w->ids, id, (uint32_t)w->ntracks);
	return ++w->ntracks;
}

/* Writes td for a track reserved by new_track: 0, or -1 on failure (the
 * id stays reserved but unusable). */
static int declare(struct pf_writer *w, uint64_t uuid, Perfetto__Protos__TrackDescriptor *td)
{
	Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	td->has_uuid = 1;
	td->uuid = uuid;
	p.track_descriptor = td;
	if (write_packet(w, &p) < 0) {
		w->tracks[uuid - 1].kind = 0;
		return -1;
	}
	return 0;
}

int pf_process_track(struct pf_writer *w, uint64_t id, int32_t pid, const char *name,
		     const char *const *cmdline)
{
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	if (pid <= 0)
		return -1;
	uint64_t uuid = new_track(w, id, TK_PROCESS);
	if (!uuid)
		return -1;
	pd.has_pid = 1;
	pd.pid = pid;
	pd.process_name = (char *)name;
	if (cmdline) {
		while (cmdline[pd.n_cmdline])
			pd.n_cmdline++;
		pd.cmdline = (char **)cmdline;
	}
	td.process = &pd;
	return declare(w, uuid, &td);
}

int pf_thread_track(struct pf_writer *w, uint64_t id, int32_t pid, int64_t tid, const char *name)
{
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor thd = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	if (pid <= 0 || tid <= 0)
		return -1; /* 0 is reserved in Perfetto */
	uint64_t uuid = new_track(w, id, TK_THREAD);
	if (!uuid)
		return -1;
	thd.has_pid = 1;
	thd.pid = pid;
	thd.has_tid = 1;
	thd.tid = tid;
	thd.thread_name = (char *)name;
	td.thread = &thd;
	return declare(w, uuid, &td);
}

int pf_child_track(struct pf_writer *w, uint64_t id, uint64_t parent, const char *name)
{
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	uint64_t pu = parent_uuid(w, parent);
	if (!pu)
		return -1;
	uint64_t uuid = new_track(w, id, TK_CHILD);
	if (!uuid)
		return -1;
	td.name = (char *)name;
	td.has_parent_uuid = 1;
	td.parent_uuid = pu;
	return declare(w, uuid, &td);
}

int pf_counter_track(struct pf_writer *w, uint64_t id, uint64_t parent, const char *name, int unit)
{
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	uint64_t pu = 0;
	if (parent && !(pu = parent_uuid(w, parent)))
		return -1;
	uint64_t uuid = new_track(w, id, TK_COUNTER);
	if (!uuid)
		return -1;
	if (unit != PF_UNIT_UNSPECIFIED) {
		cd.has_unit = 1;
		cd.unit = (Perfetto__Protos__CounterDescriptor__Unit)unit;
	}
	td.name = (char *)name;
	if (pu) {
		td.has_parent_uuid = 1;
		td.parent_uuid = pu;
	}
	td.counter = &cd;
	return declare(w, uuid, &td);
}

/* ------------------------------------------------------------------------
 * Events.
 * ---------------------------------------------------------------------- */

static int grow_scratch(struct pf_writer *w, int n)
{
	if (n <= w->scratch_cap)
		return 0;
	int cap = n < 8 ? 8 : n;
#define GROW(f)                                                       \
	do {                                                          \
		void *q = realloc(w->f, (size_t)cap * sizeof(*w->f)); \
		if (!q)                                               \
			return -1;                                    \
		w->f = q;                                             \
	} while (0)
	GROW(ann);
	GROW(ann_p);
	GROW(dan);
	GROW(dan_p);
	GROW(istr);
	GROW(istr_p);
	GROW(arg_iid);
	GROW(str_iid);
#undef GROW
	w->scratch_cap = cap;
	return 0;
}

static void reset_interning(struct pf_writer *w)
{
	intern_clear(&w->names);
	intern_clear(&w->arg_names);
	intern_clear(&w->strings);
	w->need_clear = 1;
	w->st.intern_resets++;
}

/* The iids of one event and the intern entries it introduces. */
struct ev_iids {
	uint64_t name_iid;                 /* 0: none */
	Perfetto__Protos__InternedData id; /* new entries (may be none) */
	Perfetto__Protos__EventName en;
	Perfetto__Protos__EventName *en_p;
	int has_id;
};

/* The event as a protobuf-c TracePacket in p and te (annotations in
 * w->ann): the writer's reference form, packed by protobuf-c when the
 * encoder is refused and compared with it under FEEDTRACE_PFTRACE_VERIFY. */
static void build_ref(struct pf_writer *w, const struct pf_event *ev, int nargs, struct ev_iids *ii,
		      uint32_t flags, int first, Perfetto__Protos__TracePacket *p,
		      Perfetto__Protos__TrackEvent *te)
{
	perfetto__protos__trace_packet__init(p);
	perfetto__protos__track_event__init(te);
	te->has_type = 1;
	te->type = (Perfetto__Protos__TrackEvent__Type)ev->type;
	te->has_track_uuid = 1;
	te->track_uuid = ev->track;
	if (ii->name_iid) {
		te->has_name_iid = 1;
		te->name_iid = ii->name_iid;
	}
	if (ev->type == PF_COUNTER) {
		if (ev->is_double) {
			te->has_double_counter_value = 1;
			te->double_counter_value = ev->dvalue;
		} else {
			te->has_counter_value = 1;
			te->counter_value = ev->ivalue;
		}
	}
	for (int i = 0; i < nargs; i++) {
		const struct pf_arg *a = &ev->args[i];
		Perfetto__Protos__DebugAnnotation *d = &w->ann[i];
		perfetto__protos__debug_annotation__init(d);
		w->ann_p[i] = d;
		d->has_name_iid = 1;
		d->name_iid = w->arg_iid[i];
		switch (a->kind) {
		case PF_UINT:
			d->has_uint_value = 1;
			d->uint_value = a->v.u;
			break;
		case PF_INT:
			d->has_int_value = 1;
			d->int_value = a->v.i;
			break;
		case PF_DOUBLE:
			d->has_double_value = 1;
			d->double_value = a->v.d;
			break;
		case PF_BOOL:
			d->has_bool_value = 1;
			d->bool_value = a->v.b != 0;
			break;
		case PF_POINTER:
			d->has_pointer_value = 1;
			d->pointer_value = a->v.u;
			break;
		case PF_STRING:
			d->has_string_value_iid = 1;
			d->string_value_iid = w->str_iid[i];
			break;
		}
	}
	te->n_debug_annotations = (size_t)nargs;
	te->debug_annotations = w->ann_p;
	te->n_flow_ids = (size_t)ev->nflow_ids;
	te->flow_ids = (uint64_t *)ev->flow_ids;
	te->n_terminating_flow_ids = (size_t)ev->nterm_flow_ids;
	te->terminating_flow_ids = (uint64_t *)ev->term_flow_ids;

	p->has_timestamp = 1;
	p->timestamp = ev->ts;
	if (sends_defaults(w, flags)) {
		p->has_timestamp_clock_id = 1;
		p->timestamp_clock_id = w->clock_id;
	}
	if (ii->has_id)
		p->interned_data = &ii->id;
	p->track_event = te;
	set_seq_fields(w, p, flags, first);
}

/* Room encode_te may need for ev (its TrackEvent body). */
static size_t te_bound(const struct pf_event *ev, int nargs)
{
	return 32 * (size_t)nargs + 16 * (size_t)(ev->nflow_ids + ev->nterm_flow_ids) + 80;
}

/* Encodes the TrackEvent of ev at p (room for te_bound() bytes): what
 * protobuf-c would write for build_ref()'s te. Returns the end. */
static inline ALWAYS_INLINE uint8_t *encode_te(uint8_t *p, const struct pf_event *ev, int nargs,
					       uint64_t name_iid, const uint64_t *arg_iid,
					       const uint64_t *str_iid)
{
	for (int i = 0; i < nargs; i++) {
		const struct pf_arg *a = &ev->args[i];
		p = put_tag(p, &FT.te_ann);
		uint8_t *len = p++; /* < 31 bytes follow: one length byte */
		p = put_tag(p, &FT.da_name_iid);
		p = put_varint(p, arg_iid[i]);
		switch (a->kind) {
		case PF_UINT: p = put_varint(put_tag(p, &FT.da_uint), a->v.u); break;
		case PF_INT: p = put_varint(put_tag(p, &FT.da_int), (uint64_t)a->v.i); break;
		case PF_DOUBLE: {
			uint64_t bits;
			memcpy(&bits, &a->v.d, 8);
			p = put_fixed64(put_tag(p, &FT.da_double), bits);
			break;
		}
		case PF_BOOL: p = put_varint(put_tag(p, &FT.da_bool), a->v.b != 0); break;
		case PF_POINTER: p = put_varint(put_tag(p, &FT.da_ptr), a->v.u); break;
		case PF_STRING: p = put_varint(put_tag(p, &FT.da_siid), str_iid[i]); break;
		}
		*len = (uint8_t)(p - len - 1);
	}
	p = put_varint(put_tag(p, &FT.te_type), (uint64_t)ev->type);
	if (name_iid)
		p = put_varint(put_tag(p, &FT.te_name_iid), name_iid);
	p = put_varint(put_tag(p, &FT.te_track), ev->track);
	if (ev->type == PF_COUNTER) {
		if (ev->is_double) {
			uint64_t bits;
			memcpy(&bits, &ev->dvalue, 8);
			p = put_fixed64(put_tag(p, &FT.te_dval), bits);
		} else {
			p = put_varint(put_tag(p, &FT.te_cval), (uint64_t)ev->ivalue);
		}
	}
	for (int i = 0; i < ev->nflow_ids; i++)
		p = put_fixed64(put_tag(p, &FT.te_flow), ev->flow_ids[i]);
	for (int i = 0; i < ev->nterm_flow_ids; i++)
		p = put_fixed64(put_tag(p, &FT.te_tflow), ev->term_flow_ids[i]);
	return p;
}

/* The n bytes at body were written after a one-byte length varint at
 * body - 1; writes the real (minimal) varint of n there, moving the bytes
 * on when it is longer. Returns the end of the bytes. */
static inline uint8_t *fix_len(uint8_t *body, size_t n)
{
	if (n < 0x80) {
		body[-1] = (uint8_t)n;
		return body + n;
	}
	size_t extra = varint_size(n) - 1;
	memmove(body + extra, body, n);
	put_varint(body - 1, n);
	return body + extra + n;
}

/* Appends ev as a Trace.packet: TracePacket fields in number order
 * (timestamp, trusted_packet_sequence_id, track_event, interned_data,
 * sequence_flags, timestamp_clock_id, trace_packet_defaults,
 * first_packet_on_sequence), the InternedData packed by protobuf-c.
 * Encodes in place in w->out (lengths are assumed to take one byte and
 * fixed up after). Returns the bytes written, or 0. */
static inline ALWAYS_INLINE size_t encode_event(struct pf_writer *w, const struct pf_event *ev,
						int nargs, struct ev_iids *ii,
						const uint64_t *arg_iid, const uint64_t *str_iid,
						uint32_t flags, int first, size_t *at)
{
	size_t id_len = ii->has_id ? perfetto__protos__interned_data__get_packed_size(&ii->id) : 0;
	/* everything but the TrackEvent body and interned data: < 64 bytes */
	if (reserve(w, te_bound(ev, nargs) + id_len + 64) < 0)
		return 0;
	*at = w->out_len;
	uint8_t *start = w->out + w->out_len, *p = start;
	*p++ = TRACE_PACKET_TAG;
	uint8_t *pkt = ++p; /* the packet's length: fixed below */
	p = put_varint(put_tag(p, &FT.pkt_ts), ev->ts);
	p = put_varint(put_tag(p, &FT.pkt_seq), SEQ_ID);
	p = put_tag(p, &FT.pkt_te);
	uint8_t *te = ++p;
	p = encode_te(te, ev, nargs, ii->name_iid, arg_iid, str_iid);
	p = fix_len(te, (size_t)(p - te));
	if (ii->has_id) {
		p = put_varint(put_tag(p, &FT.pkt_id), id_len);
		p += perfetto__protos__interned_data__pack(&ii->id, p);
	}
	p = put_varint(put_tag(p, &FT.pkt_flags), flags);
	if (sends_defaults(w, flags)) {
		p = put_varint(put_tag(p, &FT.pkt_clock), w->clock_id);
		p = put_tag(p, &FT.pkt_defaults);
		uint8_t *d = ++p;
		p = put_varint(put_tag(p, &FT.def_clock), w->clock_id);
		p = fix_len(d, (size_t)(p - d));
	}
	if (first)
		p = put_varint(put_tag(p, &FT.pkt_first), 1);
	p = fix_len(pkt, (size_t)(p - pkt));
	return (size_t)(p - start);
}

/* FEEDTRACE_PFTRACE_VERIFY: the n bytes just encoded at w->out + at must
 * be what protobuf-c packs for the same packet. */
static void verify_event(struct pf_writer *w, const struct pf_event *ev, int nargs,
			 struct ev_iids *ii, uint32_t flags, int first, size_t at, size_t n)
{
	Perfetto__Protos__TracePacket p;
	Perfetto__Protos__TrackEvent te;
	build_ref(w, ev, nargs, ii, flags, first, &p, &te);
	size_t len = perfetto__protos__trace_packet__get_packed_size(&p);
	if (len + 11 > w->ref_cap) {
		free(w->ref);
		w->ref_cap = len + 11;
		if (!(w->ref = malloc(w->ref_cap)))
			abort();
	}
	size_t m = pack_generic(&p, len, w->ref);
	if (m == n && memcmp(w->ref, w->out + at, n) == 0)
		return;
	fprintf(stderr,
		"pftrace: packet %llu differs from protobuf-c's packing\n"
		"  ours:      ",
		(unsigned long long)w->st.packets);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%02x", w->out[at + i]);
	fprintf(stderr, "\n  protobuf-c:");
	for (size_t i = 0; i < m; i++)
		fprintf(stderr, "%02x", w->ref[i]);
	fprintf(stderr, "\n");
	abort();
}

/* Whether a SLICE_END on t may take emit_end's constant suffix. */
static inline int end_fast(const struct pf_writer *w, const struct track *t)
{
	return t->depth && w->fast && !w->need_clear && !w->first &&
	       w->names.count + w->arg_names.count + w->strings.count <= w->intern_limit;
}

/* A SLICE_END without flows, past the first packet and any clear: the
 * timestamp, then the track's constant suffix (made by the same encoder). */
static int emit_end(struct pf_writer *w, struct track *t, uint64_t uuid, uint64_t ts)
{
	/* the whole event, for the suffix and verify only: no clearing of a
	 * struct pf_event on the way of every END */
#define END_EVENT                                             \
	{                                                     \
		.type = PF_SLICE_END, .track = uuid, .ts = ts \
	}
	if (t->end_len == 0 || t->end_clock != w->clock_id) {
		const struct pf_event e = END_EVENT, *ev = &e;
		uint8_t te[96]; /* te_bound() of an END: 80 */
		size_t te_len = (size_t)(encode_te(te, ev, 0, 0, NULL, NULL) - te);
		uint8_t *p = t->end_sfx;
		if (te_len > 20)
			return -1;
		p = put_varint(put_tag(p, &FT.pkt_seq), SEQ_ID);
		p = put_varint(put_tag(p, &FT.pkt_te), te_len);
		memcpy(p, te, te_len);
		p += te_len;
		p = put_varint(put_tag(p, &FT.pkt_flags), FLAG_NEEDS);
		t->end_len = (uint8_t)(p - t->end_sfx);
		t->end_clock = w->clock_id;
	}
	/* tag, timestamp and suffix: always < 128 bytes, one length byte */
	if (reserve(w, 16 + sizeof(t->end_sfx)) < 0)
		return -1;
	size_t at = w->out_len;
	uint8_t *start = w->out + at, *p = start + 2;
	p = put_varint(put_tag(p, &FT.pkt_ts), ts);
	for (size_t i = 0; i < t->end_len; i += 16) /* no rep movs */
		memcpy(p + i, t->end_sfx + i, 16);
	p += t->end_len;
	start[0] = TRACE_PACKET_TAG;
	start[1] = (uint8_t)(p - start - 2);
	size_t n = (size_t)(p - start);
	if (w->verify) {
		const struct pf_event e = END_EVENT;
		struct ev_iids none = { .name_iid = 0, .has_id = 0 };
		verify_event(w, &e, 0, &none, FLAG_NEEDS, 0, at, n);
	}
#undef END_EVENT
	w->out_len = at + n;
	w->st.packets++;
	w->st.bytes += n;
	t->depth--;
	w->st.open_slices--;
	w->st.events++;
	return 0;
}

/* The iid of a stable string when the pointer cache knows it, else 0. */
static inline uint64_t intern_hit(struct intern_table *t, const char *s)
{
	const struct pcache_ent *e = pcache_slot(t, s);
	return e->ptr == s && e->gen == t->gen && e->stable ? e->iid : 0;
}

#define FAST_ARGS 16

/* A stable BEGIN or INSTANT whose name, argument names and string values
 * are all interned already (nearly every event of a long trace), past the
 * first packet and any clear: no lookup beyond the pointer cache, no
 * intern entries to write. The lookups and the encoding are one pass over
 * the arguments, in place in w->out: a miss abandons the bytes written so
 * far (w->out_len has not moved). Writes what encode_event writes for
 * such an event (no interned data, flags NEEDS, not first, no defaults).
 * Returns 1 when written, 0 when the event needs the general path
 * (nothing changed then), -1 on a failed write. */
static int emit_fast(struct pf_writer *w, struct track *t, const struct pf_event *ev, int nargs)
{
	uint64_t arg_iid[FAST_ARGS], str_iid[FAST_ARGS];
	if (nargs > FAST_ARGS || !w->names.pc || !w->arg_names.pc || !w->strings.pc)
		return 0;
	uint64_t name_iid = intern_hit(&w->names, ev->name);
	if (!name_iid)
		return 0;
	if (reserve(w, te_bound(ev, nargs) + 64) < 0) {
		w->err = 1;
		return -1;
	}
	size_t at = w->out_len;
	uint8_t *start = w->out + at, *p = start;
	*p++ = TRACE_PACKET_TAG;
	uint8_t *pkt = ++p; /* the packet's length: fixed below */
	p = put_varint(put_tag(p, &FT.pkt_ts), ev->ts);
	p = put_varint(put_tag(p, &FT.pkt_seq), SEQ_ID);
	p = put_tag(p, &FT.pkt_te);
	uint8_t *te = ++p;
	/* encode_te's annotations, each looked up as it is written */
	for (int i = 0; i < nargs; i++) {
		const struct pf_arg *a = &ev->args[i];
		uint64_t aiid;
		if (!a->name || !(aiid = intern_hit(&w->arg_names, a->name)))
			return 0;
		arg_iid[i] = aiid;
		uint8_t *len;
		if (FT.ann_hdr && aiid < 0x80) {
			/* annotation key, length (fixed below), name_iid key and a
			 * one-byte iid: one 4-byte store */
			uint32_t hdr = FT.ann_hdr | (uint32_t)aiid << 24;
			memcpy(p, &hdr, 4);
			len = p + 1;
			p += 4;
		} else {
			p = put_tag(p, &FT.te_ann);
			len = p++; /* < 31 bytes follow: one length byte */
			p = put_varint(put_tag(p, &FT.da_name_iid), aiid);
		}
		switch (a->kind) {
		case PF_UINT: p = put_varint(put_tag(p, &FT.da_uint), a->v.u); break;
		case PF_POINTER: p = put_varint(put_tag(p, &FT.da_ptr), a->v.u); break;
		case PF_INT: p = put_varint(put_tag(p, &FT.da_int), (uint64_t)a->v.i); break;
		case PF_STRING: {
			uint64_t siid;
			if (!a->v.s || !(siid = intern_hit(&w->strings, a->v.s)))
				return 0;
			str_iid[i] = siid;
			p = put_varint(put_tag(p, &FT.da_siid), siid);
			break;
		}
		case PF_DOUBLE: {
			uint64_t bits;
			memcpy(&bits, &a->v.d, 8);
			p = put_fixed64(put_tag(p, &FT.da_double), bits);
			break;
		}
		case PF_BOOL: p = put_varint(put_tag(p, &FT.da_bool), a->v.b != 0); break;
		default: return 0;
		}
		*len = (uint8_t)(p - len - 1);
	}
	/* the rest of encode_te: nargs 0 skips its annotations */
	p = encode_te(p, ev, 0, name_iid, NULL, NULL);
	p = fix_len(te, (size_t)(p - te));
	p = put_varint(put_tag(p, &FT.pkt_flags), FLAG_NEEDS);
	p = fix_len(pkt, (size_t)(p - pkt));
	size_t n = (size_t)(p - start);
	if (w->verify) {
		struct ev_iids ii; /* only these two are read */
		ii.has_id = 0;
		ii.name_iid = name_iid;
		if (grow_scratch(w, nargs) < 0)
			abort();
		memcpy(w->arg_iid, arg_iid, (size_t)nargs * sizeof(*arg_iid));
		memcpy(w->str_iid, str_iid, (size_t)nargs * sizeof(*str_iid));
		verify_event(w, ev, nargs, &ii, FLAG_NEEDS, 0, at, n);
	}
	w->out_len = at + n;
	w->st.packets++;
	w->st.bytes += n;
	if (ev->type == PF_SLICE_BEGIN) {
		t->depth++;
		w->st.open_slices++;
	}
	w->st.events++;
	return 1;
}

/* Whether a stable BEGIN or INSTANT may try emit_fast. */
static inline int begin_fast(const struct pf_writer *w, const struct pf_event *ev)
{
	return (ev->type == PF_SLICE_BEGIN || ev->type == PF_INSTANT) && ev->name && ev->stable &&
	       w->fast && !w->need_clear && !w->first &&
	       w->names.count + w->arg_names.count + w->strings.count <= w->intern_limit;
}

/* pf_emit with ev->track the writer's uuid */
static int emit(struct pf_writer *w, const struct pf_event *ev)
{
	struct track *t = get_track(w, ev->track);
	int nargs = ev->args ? ev->nargs : 0;
	const char *key;
	struct ev_iids ii;

	if (w->err || !t || !t->kind || nargs < 0)
		return -1;
	if (ev->nflow_ids < 0 || ev->nterm_flow_ids < 0)
		return -1;
	if ((ev->type == PF_COUNTER) != (t->kind == TK_COUNTER))
		return -1;
	if (ev->type == PF_SLICE_END && !nargs && !ev->nflow_ids && !ev->nterm_flow_ids &&
	    end_fast(w, t))
		return emit_end(w, t, ev->track, ev->ts);
	if (begin_fast(w, ev)) {
		int r = emit_fast(w, t, ev, nargs);
		if (r)
			return r < 0 ? -1 : 0;
	}
	switch (ev->type) {
	case PF_SLICE_BEGIN:
	case PF_INSTANT:
		if (!ev->name)
			return -1;
		break;
	case PF_SLICE_END:
		if (t->depth == 0)
			return -1;
		break;
	case PF_COUNTER: break;
	default: return -1;
	}
	for (int i = 0; i < nargs; i++)
		if (ev->args[i].kind < PF_UINT || ev->args[i].kind > PF_POINTER)
			return -1;
	if (grow_scratch(w, nargs) < 0)
		return -1;

	/* Bounded interning: empty the tables before this event's lookups, so
	 * the packet that restarts the sequence carries all it needs. */
	if (w->names.count + w->arg_names.count + w->strings.count > w->intern_limit)
		reset_interning(w);

	/* ii.id is a protobuf-c message only once has_id is set (below) */
	ii.id.n_event_names = ii.id.n_debug_annotation_names =
		ii.id.n_debug_annotation_string_values = 0;
	ii.name_iid = 0;
	ii.en_p = &ii.en;
	if (ev->type == PF_SLICE_BEGIN || ev->type == PF_INSTANT) {
		if (!(ii.name_iid = intern(&w->names, ev->name, &key, ev->stable)))
			goto undo;
		if (key) {
			perfetto__protos__event_name__init(&ii.en);
			ii.en.has_iid = 1;
			ii.en.iid = ii.name_iid;
			ii.en.name = (char *)key;
			ii.id.n_event_names = 1;
		}
	}
	for (int i = 0; i < nargs; i++) {
		const struct pf_arg *a = &ev->args[i];
		w->arg_iid[i] = intern(&w->arg_names, a->name ? a->name : "", &key, ev->stable);
		if (!w->arg_iid[i])
			goto undo;
		if (key) {
			Perfetto__Protos__DebugAnnotationName *n =
				&w->dan[ii.id.n_debug_annotation_names];
			perfetto__protos__debug_annotation_name__init(n);
			n->has_iid = 1;
			n->iid = w->arg_iid[i];
			n->name = (char *)key;
			w->dan_p[ii.id.n_debug_annotation_names++] = n;
		}
		if (a->kind == PF_STRING) {
			const char *s = a->v.s ? a->v.s : "";
			if (!(w->str_iid[i] = intern(&w->strings, s, &key, ev->stable && a->v.s)))
				goto undo;
			if (key) {
				Perfetto__Protos__InternedString *is =
					&w->istr[ii.id.n_debug_annotation_string_values];
				perfetto__protos__interned_string__init(is);
				is->has_iid = 1;
				is->iid = w->str_iid[i];
				is->has_str = 1;
				is->str.data = (uint8_t *)key;
				is->str.len = strlen(key);
				w->istr_p[ii.id.n_debug_annotation_string_values++] = is;
			}
		}
	}
	ii.has_id = ii.id.n_event_names || ii.id.n_debug_annotation_names ||
		    ii.id.n_debug_annotation_string_values;
	if (ii.has_id) {
		size_t ne = ii.id.n_event_names, nd = ii.id.n_debug_annotation_names,
		       ns = ii.id.n_debug_annotation_string_values;
		perfetto__protos__interned_data__init(&ii.id);
		ii.id.n_event_names = ne;
		ii.id.event_names = ne ? &ii.en_p : NULL;
		ii.id.n_debug_annotation_names = nd;
		ii.id.debug_annotation_names = w->dan_p;
		ii.id.n_debug_annotation_string_values = ns;
		ii.id.debug_annotation_string_values = w->istr_p;
	}

	/* From here on the packet is written: the sequence state advances. */
	uint32_t flags;
	int first;
	next_seq_fields(w, &flags, &first);
	size_t at, n;
	if (w->fast) {
		if (!(n = encode_event(w, ev, nargs, &ii, w->arg_iid, w->str_iid, flags, first,
				       &at))) {
			w->err = 1;
			return -1;
		}
		if (w->verify)
			verify_event(w, ev, nargs, &ii, flags, first, at, n);
	} else {
		Perfetto__Protos__TracePacket p;
		Perfetto__Protos__TrackEvent te;
		build_ref(w, ev, nargs, &ii, flags, first, &p, &te);
		size_t len = perfetto__protos__trace_packet__get_packed_size(&p);
		if (reserve(w, len + 11) < 0)
			return -1;
		at = w->out_len;
		n = pack_generic(&p, len, w->out + at);
	}
	w->out_len = at + n;
	w->st.packets++;
	w->st.bytes += n;
	if (ii.has_id)
		w->st.interned += ii.id.n_event_names + ii.id.n_debug_annotation_names +
				  ii.id.n_debug_annotation_string_values;

	if (ev->type == PF_SLICE_BEGIN) {
		t->depth++;
		w->st.open_slices++;
	} else if (ev->type == PF_SLICE_END) {
		t->depth--;
		w->st.open_slices--;
	}
	w->st.events++;
	return 0;

undo:
	/* Entries interned for this event were never written: forget them all
	 * and restart the sequence rather than leave the tables out of step. */
	reset_interning(w);
	return -1;
}

int pf_emit(struct pf_writer *w, const struct pf_event *ev)
{
	struct pf_event e = *ev;
	e.track = uuid_of(w, ev->track);
	return emit(w, &e);
}

/* a named event of type on track at ts, with its args */
static int emit_named(struct pf_writer *w, int type, uint64_t track, uint64_t ts,
		      const char *name, const struct pf_arg *args, int nargs)
{
	struct pf_event ev = { .type = type, .track = uuid_of(w, track), .ts = ts, .name = name,
			       .args = args, .nargs = nargs };
	return emit(w, &ev);
}

int pf_slice_begin(struct pf_writer *w, uint64_t track, uint64_t ts, const char *name,
		   const struct pf_arg *args, int nargs)
{
	return emit_named(w, PF_SLICE_BEGIN, track, ts, name, args, nargs);
}

/* pf_slice_end on the writer's uuid */
static int slice_end(struct pf_writer *w, uint64_t uuid, uint64_t ts)
{
	struct track *t = get_track(w, uuid);
	/* emit's checks for a plain END, without building a whole struct pf_event */
	if (!w->err && t && t->kind && t->kind != TK_COUNTER && end_fast(w, t))
		return emit_end(w, t, uuid, ts);
	struct pf_event ev = { .type = PF_SLICE_END, .track = uuid, .ts = ts };
	return emit(w, &ev);
}

int pf_slice_end(struct pf_writer *w, uint64_t track, uint64_t ts)
{
	return slice_end(w, uuid_of(w, track), ts);
}

int pf_slice_complete(struct pf_writer *w, const struct pf_event *ev, uint64_t end)
{
	struct pf_event e = *ev;
	e.track = uuid_of(w, ev->track);
	ev = &e;
	struct track *t = get_track(w, ev->track);
	int nargs = ev->args ? ev->nargs : 0;
	/* emit's checks, then its fast path; the END that follows a fast
	 * BEGIN takes emit_end at once (end_fast holds: the BEGIN opened a
	 * slice and changed no intern table nor sequence state) */
	if (!w->err && t && t->kind && t->kind != TK_COUNTER && nargs >= 0 && ev->nflow_ids >= 0 &&
	    ev->nterm_flow_ids >= 0 && ev->type == PF_SLICE_BEGIN && begin_fast(w, ev)) {
		int r = emit_fast(w, t, ev, nargs);
		if (r < 0)
			return -1;
		if (r > 0)
			return emit_end(w, t, ev->track, end);
	}
	int rb = emit(w, ev);
	int re = slice_end(w, ev->track, end);
	return rb < 0 || re < 0 ? -1 : 0;
}

int pf_slice(struct pf_writer *w, uint64_t track, uint64_t ts, uint64_t dur, const char *name,
	     const struct pf_arg *args, int nargs)
{
	uint64_t uuid = uuid_of(w, track);
	struct pf_event ev = { .type = PF_SLICE_BEGIN, .track = uuid, .ts = ts, .name = name,
			       .args = args, .nargs = nargs };
	if (emit(w, &ev) < 0)
		return -1;
	return slice_end(w, uuid, ts + dur);
}

int pf_instant(struct pf_writer *w, uint64_t track, uint64_t ts, const char *name,
	       const struct pf_arg *args, int nargs)
{
	return emit_named(w, PF_INSTANT, track, ts, name, args, nargs);
}

int pf_counter(struct pf_writer *w, uint64_t track, uint64_t ts, int64_t value)
{
	struct pf_event ev = { .type = PF_COUNTER, .track = uuid_of(w, track), .ts = ts,
			       .ivalue = value };
	return emit(w, &ev);
}

int pf_counter_double(struct pf_writer *w, uint64_t track, uint64_t ts, double value)
{
	struct pf_event ev = { .type = PF_COUNTER, .track = uuid_of(w, track), .ts = ts,
			       .is_double = 1, .dvalue = value };
	return emit(w, &ev);
}

int pf_slice_begin_flow(struct pf_writer *w, uint64_t track, uint64_t ts, const char *name,
			const struct pf_arg *args, int nargs, const uint64_t *flow_ids,
			int nflow_ids, int terminating)
{
	struct pf_event ev = { .type = PF_SLICE_BEGIN,
			       .track = uuid_of(w, track),
			       .ts = ts,
			       .name = name,
			       .args = args,
			       .nargs = nargs };
	if (terminating) {
		ev.term_flow_ids = flow_ids;
		ev.nterm_flow_ids = nflow_ids;
	} else {
		ev.flow_ids = flow_ids;
		ev.nflow_ids = nflow_ids;
	}
	return emit(w, &ev);
}
