/* pftrace.c - streaming writer of Perfetto protobuf traces (.pftrace).
 * Packs one TracePacket per call with protobuf-c and appends it to a FILE*
 * as a Trace.packet field; interns names and string values per sequence. */
#define _POSIX_C_SOURCE 200809L  /* strdup */
#include "pftrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfetto.pb-c.h"

#define SEQ_ID 1                /* our one trusted_packet_sequence_id */
#define FLAG_CLEARED 1          /* INCREMENTAL_STATE_CLEARED */
#define FLAG_NEEDS 2            /* NEEDS_INCREMENTAL_STATE */
#define TRACE_PACKET_TAG 0x0a   /* field 1, wire type 2 (length-delimited) */

/* ------------------------------------------------------------------------
 * Intern table: string -> iid, open addressing with linear probing. Keys
 * are owned copies. iids count from 1 and restart after a clear.
 * ---------------------------------------------------------------------- */

typedef struct intern_table {
    char **keys;
    uint64_t *iids;
    uint32_t cap;               /* power of two, or 0 */
    uint32_t count;
    uint64_t next_iid;
} intern_table;

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ULL;        /* FNV-1a */
    while (*s) {
        h ^= (unsigned char)*s++;
        h *= 1099511628211ULL;
    }
    return h;
}

static void intern_clear(intern_table *t) {
    for (uint32_t i = 0; i < t->cap; i++) free(t->keys[i]);
    free(t->keys);
    free(t->iids);
    memset(t, 0, sizeof(*t));
}

static int intern_grow(intern_table *t) {
    uint32_t ncap = t->cap ? t->cap * 2 : 64;
    char **keys = calloc(ncap, sizeof(*keys));
    uint64_t *iids = calloc(ncap, sizeof(*iids));
    if (!keys || !iids) {
        free(keys);
        free(iids);
        return -1;
    }
    for (uint32_t i = 0; i < t->cap; i++) {
        if (!t->keys[i]) continue;
        uint32_t j = (uint32_t)hash_str(t->keys[i]) & (ncap - 1);
        while (keys[j]) j = (j + 1) & (ncap - 1);
        keys[j] = t->keys[i];
        iids[j] = t->iids[i];
    }
    free(t->keys);
    free(t->iids);
    t->keys = keys;
    t->iids = iids;
    t->cap = ncap;
    return 0;
}

/* Returns the iid of s, adding it if absent (then *key is set to the stored
 * copy, else to NULL). Returns 0 when out of memory. */
static uint64_t intern(intern_table *t, const char *s, const char **key) {
    *key = NULL;
    if ((t->count + 1) * 2 > t->cap && intern_grow(t) < 0) return 0;
    uint32_t j = (uint32_t)hash_str(s) & (t->cap - 1);
    while (t->keys[j]) {
        if (strcmp(t->keys[j], s) == 0) return t->iids[j];
        j = (j + 1) & (t->cap - 1);
    }
    if (!(t->keys[j] = strdup(s))) return 0;
    if (t->next_iid == 0) t->next_iid = 1;
    t->iids[j] = t->next_iid++;
    t->count++;
    *key = t->keys[j];
    return t->iids[j];
}

/* ------------------------------------------------------------------------
 * Writer state.
 * ---------------------------------------------------------------------- */

enum { TK_PROCESS = 1, TK_THREAD, TK_CHILD, TK_COUNTER };

typedef struct track {
    unsigned char kind;
    uint32_t depth;             /* open slices */
} track;

struct pf_writer {
    FILE *fp;
    int err;                    /* a write failed: sticky */
    int need_clear;             /* next packet is flagged CLEARED|NEEDS */
    int first;                  /* no packet written yet */
    uint32_t clock_id;
    uint32_t intern_limit;
    intern_table names, arg_names, strings;
    track *tracks;              /* tracks[uuid - 1] */
    uint64_t ntracks, tracks_cap;
    uint64_t last_flow;
    uint8_t *buf;               /* packed packet */
    size_t buf_cap;
    /* Per-event scratch, grown to the largest nargs seen. */
    int scratch_cap;
    Perfetto__Protos__DebugAnnotation *ann;
    Perfetto__Protos__DebugAnnotation **ann_p;
    Perfetto__Protos__DebugAnnotationName *dan;
    Perfetto__Protos__DebugAnnotationName **dan_p;
    Perfetto__Protos__InternedString *istr;
    Perfetto__Protos__InternedString **istr_p;
    pf_stats st;
};

pf_writer *pf_open(const char *path) {
    pf_writer *w = calloc(1, sizeof(*w));
    if (!w) return NULL;
    if (!(w->fp = fopen(path, "wb"))) {
        free(w);
        return NULL;
    }
    w->need_clear = 1;
    w->first = 1;
    w->clock_id = PF_CLOCK_BOOTTIME;
    w->intern_limit = PF_INTERN_LIMIT_DEFAULT;
    return w;
}

int pf_close(pf_writer *w) {
    if (!w) return -1;
    int err = w->err;
    if (fflush(w->fp) != 0 || ferror(w->fp)) err = 1;
    if (fclose(w->fp) != 0) err = 1;
    intern_clear(&w->names);
    intern_clear(&w->arg_names);
    intern_clear(&w->strings);
    free(w->tracks);
    free(w->buf);
    free(w->ann);
    free(w->ann_p);
    free(w->dan);
    free(w->dan_p);
    free(w->istr);
    free(w->istr_p);
    free(w);
    return err ? -1 : 0;
}

void pf_set_clock(pf_writer *w, uint32_t clock_id) {
    w->clock_id = clock_id;
}

void pf_set_intern_limit(pf_writer *w, uint32_t n) {
    w->intern_limit = n ? n : PF_INTERN_LIMIT_DEFAULT;
}

void pf_get_stats(const pf_writer *w, pf_stats *st) {
    *st = w->st;
}

/* Sets the sequence fields, packs p and appends it as a Trace.packet. */
static int write_packet(pf_writer *w, Perfetto__Protos__TracePacket *p) {
    if (w->err) return -1;
    p->has_trusted_packet_sequence_id = 1;
    p->trusted_packet_sequence_id = SEQ_ID;
    p->has_sequence_flags = 1;
    p->sequence_flags = FLAG_NEEDS;
    if (w->need_clear) {
        p->sequence_flags |= FLAG_CLEARED;
        w->need_clear = 0;
    }
    if (w->first) {
        p->has_first_packet_on_sequence = 1;
        p->first_packet_on_sequence = 1;
        w->first = 0;
    }

    size_t len = perfetto__protos__trace_packet__get_packed_size(p);
    if (len + 11 > w->buf_cap) {
        size_t cap = (len + 11) * 2;
        uint8_t *b = realloc(w->buf, cap);
        if (!b) {
            w->err = 1;
            return -1;
        }
        w->buf = b;
        w->buf_cap = cap;
    }
    size_t hdr = 0;
    w->buf[hdr++] = TRACE_PACKET_TAG;
    for (uint64_t v = len; ; v >>= 7) {             /* varint length */
        w->buf[hdr++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        if (v < 0x80) break;
    }
    perfetto__protos__trace_packet__pack(p, w->buf + hdr);
    if (fwrite(w->buf, 1, hdr + len, w->fp) != hdr + len) {
        w->err = 1;
        return -1;
    }
    w->st.packets++;
    w->st.bytes += hdr + len;
    return 0;
}

int pf_clock_snapshot(pf_writer *w, uint64_t boottime_ns,
                      uint64_t realtime_ns, uint64_t monotonic_ns) {
    Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
    Perfetto__Protos__ClockSnapshot__Clock c[3], *cp[3];
    uint32_t ids[3] = { PF_CLOCK_BOOTTIME, PF_CLOCK_REALTIME,
                        PF_CLOCK_MONOTONIC };
    uint64_t ts[3] = { boottime_ns, realtime_ns, monotonic_ns };
    size_t n = 0;

    for (int i = 0; i < 3; i++) {
        if (i > 0 && ts[i] == 0) continue;
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

/* ------------------------------------------------------------------------
 * Tracks.
 * ---------------------------------------------------------------------- */

static track *get_track(pf_writer *w, uint64_t uuid) {
    return (uuid >= 1 && uuid <= w->ntracks) ? &w->tracks[uuid - 1] : NULL;
}

/* Reserves the next uuid for a track of the given kind; 0 on error. */
static uint64_t new_track(pf_writer *w, int kind) {
    if (w->err) return 0;
    if (w->ntracks == w->tracks_cap) {
        uint64_t cap = w->tracks_cap ? w->tracks_cap * 2 : 16;
        track *t = realloc(w->tracks, cap * sizeof(*t));
        if (!t) return 0;
        w->tracks = t;
        w->tracks_cap = cap;
    }
    w->tracks[w->ntracks].kind = (unsigned char)kind;
    w->tracks[w->ntracks].depth = 0;
    return ++w->ntracks;
}

/* Writes td for a track reserved by new_track; on failure the uuid stays
 * reserved but unusable, and 0 is returned. */
static uint64_t declare(pf_writer *w, uint64_t uuid,
                        Perfetto__Protos__TrackDescriptor *td) {
    Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    td->has_uuid = 1;
    td->uuid = uuid;
    p.track_descriptor = td;
    if (write_packet(w, &p) < 0) {
        w->tracks[uuid - 1].kind = 0;
        return 0;
    }
    return uuid;
}

uint64_t pf_process_track(pf_writer *w, int32_t pid, const char *name,
                          const char *const *cmdline) {
    Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
    if (pid <= 0) return 0;
    uint64_t uuid = new_track(w, TK_PROCESS);
    if (!uuid) return 0;
    pd.has_pid = 1;
    pd.pid = pid;
    pd.process_name = (char *)name;
    if (cmdline) {
        while (cmdline[pd.n_cmdline]) pd.n_cmdline++;
        pd.cmdline = (char **)cmdline;
    }
    td.process = &pd;
    return declare(w, uuid, &td);
}

uint64_t pf_thread_track(pf_writer *w, int32_t pid, int64_t tid,
                         const char *name) {
    Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    Perfetto__Protos__ThreadDescriptor thd = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
    if (pid <= 0 || tid <= 0) return 0;     /* 0 is reserved in Perfetto */
    uint64_t uuid = new_track(w, TK_THREAD);
    if (!uuid) return 0;
    thd.has_pid = 1;
    thd.pid = pid;
    thd.has_tid = 1;
    thd.tid = tid;
    thd.thread_name = (char *)name;
    td.thread = &thd;
    return declare(w, uuid, &td);
}

uint64_t pf_child_track(pf_writer *w, uint64_t parent_uuid, const char *name) {
    Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    track *parent = get_track(w, parent_uuid);
    if (!parent || !parent->kind || parent->kind == TK_COUNTER) return 0;
    uint64_t uuid = new_track(w, TK_CHILD);
    if (!uuid) return 0;
    td.name = (char *)name;
    td.has_parent_uuid = 1;
    td.parent_uuid = parent_uuid;
    return declare(w, uuid, &td);
}

uint64_t pf_counter_track(pf_writer *w, uint64_t parent_uuid,
                          const char *name, int unit) {
    Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
    Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
    if (parent_uuid) {
        track *parent = get_track(w, parent_uuid);
        if (!parent || !parent->kind || parent->kind == TK_COUNTER) return 0;
    }
    uint64_t uuid = new_track(w, TK_COUNTER);
    if (!uuid) return 0;
    if (unit != PF_UNIT_UNSPECIFIED) {
        cd.has_unit = 1;
        cd.unit = (Perfetto__Protos__CounterDescriptor__Unit)unit;
    }
    td.name = (char *)name;
    if (parent_uuid) {
        td.has_parent_uuid = 1;
        td.parent_uuid = parent_uuid;
    }
    td.counter = &cd;
    return declare(w, uuid, &td);
}

/* ------------------------------------------------------------------------
 * Events.
 * ---------------------------------------------------------------------- */

static int grow_scratch(pf_writer *w, int n) {
    if (n <= w->scratch_cap) return 0;
    int cap = n < 8 ? 8 : n;
#define GROW(f) do { \
        void *q = realloc(w->f, (size_t)cap * sizeof(*w->f)); \
        if (!q) return -1; \
        w->f = q; \
    } while (0)
    GROW(ann); GROW(ann_p); GROW(dan); GROW(dan_p); GROW(istr); GROW(istr_p);
#undef GROW
    w->scratch_cap = cap;
    return 0;
}

static void reset_interning(pf_writer *w) {
    intern_clear(&w->names);
    intern_clear(&w->arg_names);
    intern_clear(&w->strings);
    w->need_clear = 1;
    w->st.intern_resets++;
}

int pf_emit(pf_writer *w, const pf_event *ev) {
    Perfetto__Protos__TracePacket p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
    Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
    Perfetto__Protos__InternedData id = PERFETTO__PROTOS__INTERNED_DATA__INIT;
    Perfetto__Protos__EventName en = PERFETTO__PROTOS__EVENT_NAME__INIT;
    Perfetto__Protos__EventName *en_p = &en;
    track *t = get_track(w, ev->track);
    int nargs = ev->args ? ev->nargs : 0;
    const char *key;

    if (w->err || !t || !t->kind || nargs < 0) return -1;
    if (ev->nflow_ids < 0 || ev->nterm_flow_ids < 0) return -1;
    if ((ev->type == PF_COUNTER) != (t->kind == TK_COUNTER)) return -1;
    switch (ev->type) {
    case PF_SLICE_BEGIN:
    case PF_INSTANT:
        if (!ev->name) return -1;
        break;
    case PF_SLICE_END:
        if (t->depth == 0) return -1;
        break;
    case PF_COUNTER:
        break;
    default:
        return -1;
    }
    for (int i = 0; i < nargs; i++)
        if (ev->args[i].kind < PF_UINT || ev->args[i].kind > PF_POINTER)
            return -1;
    if (grow_scratch(w, nargs) < 0) return -1;

    /* Bounded interning: empty the tables before this event's lookups, so
     * the packet that restarts the sequence carries all it needs. */
    if (w->names.count + w->arg_names.count + w->strings.count >
        w->intern_limit)
        reset_interning(w);

    te.has_type = 1;
    te.type = (Perfetto__Protos__TrackEvent__Type)ev->type;
    te.has_track_uuid = 1;
    te.track_uuid = ev->track;
    if (ev->type == PF_SLICE_BEGIN || ev->type == PF_INSTANT) {
        te.has_name_iid = 1;
        if (!(te.name_iid = intern(&w->names, ev->name, &key))) goto undo;
        if (key) {
            en.has_iid = 1;
            en.iid = te.name_iid;
            en.name = (char *)key;
            id.n_event_names = 1;
            id.event_names = &en_p;
        }
    }
    if (ev->type == PF_COUNTER) {
        if (ev->is_double) {
            te.has_double_counter_value = 1;
            te.double_counter_value = ev->dvalue;
        } else {
            te.has_counter_value = 1;
            te.counter_value = ev->ivalue;
        }
    }

    for (int i = 0; i < nargs; i++) {
        const pf_arg *a = &ev->args[i];
        Perfetto__Protos__DebugAnnotation *d = &w->ann[i];
        perfetto__protos__debug_annotation__init(d);
        w->ann_p[i] = d;
        d->has_name_iid = 1;
        d->name_iid = intern(&w->arg_names, a->name ? a->name : "", &key);
        if (!d->name_iid) goto undo;
        if (key) {
            Perfetto__Protos__DebugAnnotationName *n =
                &w->dan[id.n_debug_annotation_names];
            perfetto__protos__debug_annotation_name__init(n);
            n->has_iid = 1;
            n->iid = d->name_iid;
            n->name = (char *)key;
            w->dan_p[id.n_debug_annotation_names++] = n;
        }
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
        case PF_STRING: {
            const char *s = a->v.s ? a->v.s : "";
            d->has_string_value_iid = 1;
            if (!(d->string_value_iid = intern(&w->strings, s, &key)))
                goto undo;
            if (key) {
                Perfetto__Protos__InternedString *is =
                    &w->istr[id.n_debug_annotation_string_values];
                perfetto__protos__interned_string__init(is);
                is->has_iid = 1;
                is->iid = d->string_value_iid;
                is->has_str = 1;
                is->str.data = (uint8_t *)key;
                is->str.len = strlen(key);
                w->istr_p[id.n_debug_annotation_string_values++] = is;
            }
            break;
        }
        default:
            goto undo;
        }
    }
    te.n_debug_annotations = (size_t)nargs;
    te.debug_annotations = w->ann_p;
    id.debug_annotation_names = w->dan_p;
    id.debug_annotation_string_values = w->istr_p;
    te.n_flow_ids = (size_t)ev->nflow_ids;
    te.flow_ids = (uint64_t *)ev->flow_ids;
    te.n_terminating_flow_ids = (size_t)ev->nterm_flow_ids;
    te.terminating_flow_ids = (uint64_t *)ev->term_flow_ids;

    p.has_timestamp = 1;
    p.timestamp = ev->ts;
    if (w->clock_id != PF_CLOCK_BOOTTIME) {
        p.has_timestamp_clock_id = 1;
        p.timestamp_clock_id = w->clock_id;
    }
    if (id.n_event_names || id.n_debug_annotation_names ||
        id.n_debug_annotation_string_values) {
        p.interned_data = &id;
        w->st.interned += id.n_event_names + id.n_debug_annotation_names +
                          id.n_debug_annotation_string_values;
    }
    p.track_event = &te;
    if (write_packet(w, &p) < 0) return -1;

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

int pf_slice_begin(pf_writer *w, uint64_t track, uint64_t ts,
                   const char *name, const pf_arg *args, int nargs) {
    pf_event ev = { .type = PF_SLICE_BEGIN, .track = track, .ts = ts,
                    .name = name, .args = args, .nargs = nargs };
    return pf_emit(w, &ev);
}

int pf_slice_end(pf_writer *w, uint64_t track, uint64_t ts) {
    pf_event ev = { .type = PF_SLICE_END, .track = track, .ts = ts };
    return pf_emit(w, &ev);
}

int pf_slice(pf_writer *w, uint64_t track, uint64_t ts, uint64_t dur,
             const char *name, const pf_arg *args, int nargs) {
    if (pf_slice_begin(w, track, ts, name, args, nargs) < 0) return -1;
    return pf_slice_end(w, track, ts + dur);
}

int pf_instant(pf_writer *w, uint64_t track, uint64_t ts,
               const char *name, const pf_arg *args, int nargs) {
    pf_event ev = { .type = PF_INSTANT, .track = track, .ts = ts,
                    .name = name, .args = args, .nargs = nargs };
    return pf_emit(w, &ev);
}

int pf_counter(pf_writer *w, uint64_t track, uint64_t ts, int64_t value) {
    pf_event ev = { .type = PF_COUNTER, .track = track, .ts = ts,
                    .ivalue = value };
    return pf_emit(w, &ev);
}

int pf_counter_double(pf_writer *w, uint64_t track, uint64_t ts,
                      double value) {
    pf_event ev = { .type = PF_COUNTER, .track = track, .ts = ts,
                    .is_double = 1, .dvalue = value };
    return pf_emit(w, &ev);
}

uint64_t pf_new_flow_id(pf_writer *w) {
    return ++w->last_flow;
}

int pf_slice_begin_flow(pf_writer *w, uint64_t track, uint64_t ts,
                        const char *name, const pf_arg *args, int nargs,
                        const uint64_t *flow_ids, int nflow_ids,
                        int terminating) {
    pf_event ev = { .type = PF_SLICE_BEGIN, .track = track, .ts = ts,
                    .name = name, .args = args, .nargs = nargs };
    if (terminating) {
        ev.term_flow_ids = flow_ids;
        ev.nterm_flow_ids = nflow_ids;
    } else {
        ev.flow_ids = flow_ids;
        ev.nflow_ids = nflow_ids;
    }
    return pf_emit(w, &ev);
}
