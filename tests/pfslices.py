"""pfslices.py - the slices of a .pftrace as dicts, for tests that assert
exact slices: each slice's track (its name), name, ts, end, the flow ids
it starts or continues (flows) and ends (term), its arguments (args).
Decoded with tests/check_pftrace.py's protoc decoder; owns nothing else."""
from check_pftrace import DEFAULT_PROTO, decode_file, one


def slices(path):
    """every slice of the file: dicts of track (its name), name, ts, end,
    flows (started or continued), term (ended), args"""
    tracks, seqs, open_, out = {}, {}, {}, []
    for pkt in decode_file(path, DEFAULT_PROTO):
        td = one(pkt, "track_descriptor")
        if td is not None:
            thr = one(td, "thread")
            tracks[one(td, "uuid")] = one(td, "name") or (thr and one(thr, "thread_name")) or ""
        sid = one(pkt, "trusted_packet_sequence_id")
        if one(pkt, "sequence_flags", 0) & 1:
            seqs[sid] = {"event_names": {}, "debug_annotation_names": {},
                         "debug_annotation_string_values": {}}
        idata = one(pkt, "interned_data")
        if idata is not None:
            for kind, tab in seqs[sid].items():
                for e in idata.get(kind, ()):
                    tab[one(e, "iid")] = one(e, "str" if kind.endswith("values") else "name")
        te = one(pkt, "track_event")
        if te is None:
            continue
        ty, uuid, ts = one(te, "type"), one(te, "track_uuid"), one(pkt, "timestamp")
        if ty == "TYPE_SLICE_END":
            open_[uuid].pop()["end"] = ts
            continue
        if ty != "TYPE_SLICE_BEGIN":
            continue
        tab = seqs.get(sid, {})
        name = one(te, "name") or tab["event_names"].get(one(te, "name_iid"))
        args = {}
        for a in te.get("debug_annotations", ()):
            k = one(a, "name") or tab["debug_annotation_names"].get(one(a, "name_iid"))
            v = one(a, "string_value")
            if v is None and one(a, "string_value_iid") is not None:
                v = tab["debug_annotation_string_values"][one(a, "string_value_iid")]
            args[k] = v
        s = {"track": tracks[uuid], "name": name, "ts": ts, "end": None,
             "flows": list(te.get("flow_ids", ())), "term": list(te.get("terminating_flow_ids", ())),
             "args": args}
        open_.setdefault(uuid, []).append(s)
        out.append(s)
    return out
