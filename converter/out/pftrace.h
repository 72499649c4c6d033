/* pftrace.h - streaming writer of Perfetto protobuf traces (.pftrace).
 * Owns the on-disk Perfetto format: track declarations, track events,
 * string interning and sequence flags. Knows nothing of feedtrace's reader. */
#ifndef PFTRACE_H
#define PFTRACE_H

#include <stdint.h>

#include "pfarg.h"

/* Each call appends one TracePacket to the file as a Trace.packet field, so
 * memory does not grow with the trace, except for the intern tables, which
 * are emptied (and the sequence restarted with INCREMENTAL_STATE_CLEARED)
 * when they hold more than the intern limit (pf_set_intern_limit).
 *
 * Timestamps are nanoseconds on CLOCK_BOOTTIME unless pf_set_clock() says
 * otherwise. Track uuids are 1, 2, 3... in creation order; 0 means error.
 * Calls returning int give 0 on success and -1 on error (bad argument or
 * failed write). A failed write is sticky: pf_close() then returns -1. */

struct pf_writer;

/* CounterDescriptor.Unit values. */
enum pf_unit {
	PF_UNIT_UNSPECIFIED = 0,
	PF_UNIT_TIME_NS = 1,
	PF_UNIT_COUNT = 2,
	PF_UNIT_SIZE_BYTES = 3
};

/* TrackEvent.Type values. */
enum pf_event_type { PF_SLICE_BEGIN = 1, PF_SLICE_END = 2, PF_INSTANT = 3, PF_COUNTER = 4 };

/* Perfetto builtin clock ids. */
enum pf_clock {
	PF_CLOCK_REALTIME = 1,
	PF_CLOCK_MONOTONIC = 3,
	PF_CLOCK_MONOTONIC_RAW = 5,
	PF_CLOCK_BOOTTIME = 6
};

/* The general event; the helpers below fill one in. Unused fields are 0. */
struct pf_event {
	int type; /* enum pf_event_type */
	uint64_t track;
	uint64_t ts;
	const char *name; /* slices, instants; NULL for END */
	const struct pf_arg *args;
	int nargs;
	const uint64_t *flow_ids; /* flows this event continues/starts */
	int nflow_ids;
	const uint64_t *term_flow_ids; /* flows this event ends */
	int nterm_flow_ids;
	int is_double; /* counters: which value to write */
	int64_t ivalue;
	double dvalue;
	/* Non-zero: name, the args' names and their PF_STRING values stay
	 * unchanged at their addresses until pf_close() (literals, a string
	 * table that outlives the writer), so interning finds them by address
	 * alone. Otherwise each lookup also compares the text. */
	int stable;
};

struct pf_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t events;
	uint64_t interned;      /* intern entries emitted, all kinds */
	uint64_t intern_resets; /* times the intern tables were emptied */
	uint64_t open_slices;   /* BEGINs not yet ENDed, all tracks */
};

struct pf_writer *pf_open(const char *path);
int pf_close(struct pf_writer *w);

/* Writes a ClockSnapshot relating BOOTTIME to REALTIME and MONOTONIC (a 0
 * value leaves that clock out). */
/* One ProcessTree packet at ts: each process's pid, parent pid (0: none)
 * and, when argv is not NULL, argc arguments each (process i's are
 * argv[i * argc ...]). Trace processor links a child to its parent's upid
 * and names a process after the first word of its first argument. */
int pf_process_tree(struct pf_writer *w, uint64_t ts, int n, const int32_t *pid,
		    const int32_t *ppid, const char *const *argv, int argc);
int pf_clock_snapshot(struct pf_writer *w, uint64_t boottime_ns, uint64_t realtime_ns,
		      uint64_t monotonic_ns);
/* Later event timestamps are on clock_id. It becomes the sequence's
 * default clock (TracePacketDefaults, sent again with every clear of the
 * incremental state, and the sequence is cleared for it now), so event
 * packets do not repeat it. The clock must be related to BOOTTIME by a
 * pf_clock_snapshot() first. */
void pf_set_clock(struct pf_writer *w, uint32_t clock_id);
/* Empty the intern tables when they hold more than n entries (default
 * PF_INTERN_LIMIT_DEFAULT; 0 restores the default). */
void pf_set_intern_limit(struct pf_writer *w, uint32_t n);
#define PF_INTERN_LIMIT_DEFAULT 100000

/* Track declarations. The caller chooses each track's id: any nonzero
 * number that names what the track is (pf_id() of its parts, as
 * Perfetto's own Track(id, parent)), so a caller that queues its events
 * needs nothing back from the writer. The file carries the writer's own
 * uuids, 1, 2, 3... in declaration order (short varints on every event).
 * Each writes a TrackDescriptor and returns 0, or -1: id 0 or declared
 * already, pid or tid not above 0, a parent not declared or a counter, a
 * write error. cmdline is a NULL-terminated array or NULL. A child track
 * is a named slice track under parent (e.g. a process track). A counter
 * track's parent may be 0 (a global counter). Events name their track by
 * its id; an id never declared makes them fail. */
int pf_process_track(struct pf_writer *w, uint64_t id, int32_t pid, const char *name,
		     const char *const *cmdline);
int pf_thread_track(struct pf_writer *w, uint64_t id, int32_t pid, int64_t tid, const char *name);
int pf_child_track(struct pf_writer *w, uint64_t id, uint64_t parent, const char *name);
int pf_counter_track(struct pf_writer *w, uint64_t id, uint64_t parent, const char *name, int unit);
/* A nonzero id mixed from three parts (a kind of the caller's, then what
 * tells such tracks apart: a parent's id, a pid, a tid, a lane...). Also
 * fit for flow ids. */
uint64_t pf_id(uint64_t kind, uint64_t a, uint64_t b);

/* Events. Slices nest per track: an END closes the latest open BEGIN; an
 * END with none open is refused (-1). Counters go on counter tracks only,
 * slices and instants on the others. */
int pf_emit(struct pf_writer *w, const struct pf_event *ev);
int pf_slice_begin(struct pf_writer *w, uint64_t track, uint64_t ts, const char *name,
		   const struct pf_arg *args, int nargs);
int pf_slice_end(struct pf_writer *w, uint64_t track, uint64_t ts);
/* A complete slice: ev (a SLICE_BEGIN) then its END at end on the same
 * track, exactly as pf_emit(w, ev) then pf_slice_end(w, ev->track, end),
 * the END written even if the BEGIN failed; -1 if either failed. */
int pf_slice_complete(struct pf_writer *w, const struct pf_event *ev, uint64_t end);
int pf_slice(struct pf_writer *w, uint64_t track, uint64_t ts, uint64_t dur, const char *name,
	     const struct pf_arg *args, int nargs);
int pf_instant(struct pf_writer *w, uint64_t track, uint64_t ts, const char *name,
	       const struct pf_arg *args, int nargs);
int pf_counter(struct pf_writer *w, uint64_t track, uint64_t ts, int64_t value);
int pf_counter_double(struct pf_writer *w, uint64_t track, uint64_t ts, double value);

/* Flows link slices (across tracks): the earliest event of a flow id is its
 * source. Flow ids are the caller's (nonzero; pf_id() of what the flow
 * links), written as they are. Begin a slice carrying flow ids;
 * terminating != 0 ends them there (later events with the same id start a
 * new flow). */
int pf_slice_begin_flow(struct pf_writer *w, uint64_t track, uint64_t ts, const char *name,
			const struct pf_arg *args, int nargs, const uint64_t *flow_ids,
			int nflow_ids, int terminating);

void pf_get_stats(const struct pf_writer *w, struct pf_stats *st);

#endif
