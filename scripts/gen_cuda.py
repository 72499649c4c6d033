#!/usr/bin/env python3
"""gen_cuda.py: generates the CUDA driver wrappers from shim/cuda.tsv.

    gen_cuda.py shim/cuda.tsv OUT_DIR

writes OUT_DIR/cuda_wrappers.c (one wrapper per row, and the table the
resolver in shim/cuda.c works from) and OUT_DIR/cuda_check_default.c /
cuda_check_ptds.c (compiled against the toolkit's cuda.h, when present,
to check every wrapper's parameter list against the real prototypes).
"""
import os
import sys

import ftdefs


def read_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            sym, api, since, ptsz, shape, params, rec = line.rstrip("\n").split("\t")
            recd = {}
            for item in rec.split():
                k, _, v = item.partition("=")
                recd[k] = v
            rows.append(dict(sym=sym, api=api, since=int(since), ptsz=int(ptsz),
                             shape=shape, params=params, rec=recd))
    return rows


def arg_names(params):
    if params.strip() == "void":
        return []
    names = []
    for p in params.split(","):
        p = p.strip()
        name = p.replace("*", " ").split()[-1]
        names.append(name)
    return names


def event_kind(api):
    """cuMemcpyDtoHAsync -> FT_EV_CU_MEMCPY_DTOH_ASYNC: the events.def kind
    whose name is the API's (looked up by name at run time would cost a
    search; the generator maps api names to kinds here)."""
    return "FT_EV_" + KIND[api]


KIND = {k.name: k.id for k in ftdefs.kinds().values() if k.group == "FT_G_CUDA"}


# x86-64 offsets of the descriptor fields the wrappers read, and sizes
# (field None): asserted against cuda.h (write_check) and against
# shim/cuda_types.h in the generated wrappers, one list for both.
STRUCT_OFFSETS = [('CUDA_MEMCPY2D', 'srcMemoryType', 16), ('CUDA_MEMCPY2D', 'srcHost', 24), ('CUDA_MEMCPY2D', 'srcDevice', 32), ('CUDA_MEMCPY2D', 'dstMemoryType', 72), ('CUDA_MEMCPY2D', 'dstHost', 80), ('CUDA_MEMCPY2D', 'dstDevice', 88), ('CUDA_MEMCPY2D', 'WidthInBytes', 112), ('CUDA_MEMCPY2D', 'Height', 120), ('CUDA_MEMCPY3D', 'srcMemoryType', 32), ('CUDA_MEMCPY3D', 'srcHost', 40), ('CUDA_MEMCPY3D', 'srcDevice', 48), ('CUDA_MEMCPY3D', 'dstMemoryType', 120), ('CUDA_MEMCPY3D', 'dstHost', 128), ('CUDA_MEMCPY3D', 'dstDevice', 136), ('CUDA_MEMCPY3D', 'WidthInBytes', 176), ('CUDA_MEMCPY3D', 'Height', 184), ('CUDA_MEMCPY3D', 'Depth', 192), ('CUlaunchConfig', 'hStream', 32),
                  ('CUDA_MEMCPY3D_PEER', 'srcMemoryType', 32), ('CUDA_MEMCPY3D_PEER', 'srcHost', 40), ('CUDA_MEMCPY3D_PEER', 'srcDevice', 48), ('CUDA_MEMCPY3D_PEER', 'dstMemoryType', 120), ('CUDA_MEMCPY3D_PEER', 'dstHost', 128), ('CUDA_MEMCPY3D_PEER', 'dstDevice', 136), ('CUDA_MEMCPY3D_PEER', 'WidthInBytes', 176), ('CUDA_MEMCPY3D_PEER', 'Height', 184), ('CUDA_MEMCPY3D_PEER', 'Depth', 192),
                  ('CUDA_MEMCPY3D_BATCH_OP', 'src.type', 0), ('CUDA_MEMCPY3D_BATCH_OP', 'src.op.ptr.ptr', 8), ('CUDA_MEMCPY3D_BATCH_OP', 'src.op.array.array', 8), ('CUDA_MEMCPY3D_BATCH_OP', 'dst.type', 40), ('CUDA_MEMCPY3D_BATCH_OP', 'dst.op.ptr.ptr', 48), ('CUDA_MEMCPY3D_BATCH_OP', 'dst.op.array.array', 48), ('CUDA_MEMCPY3D_BATCH_OP', 'extent.width', 80), ('CUDA_MEMCPY3D_BATCH_OP', 'extent.height', 88), ('CUDA_MEMCPY3D_BATCH_OP', 'extent.depth', 96), ('CUDA_MEMCPY3D_BATCH_OP', 'flags', 108),
                  ('CUDA_ARRAY3D_DESCRIPTOR', 'Format', 24), ('CUDA_ARRAY3D_DESCRIPTOR', 'NumChannels', 28),
                  ('CUDA_MEMCPY3D_BATCH_OP', None, 112)]


# The GPU's timing events (shim/gpu_time.c): hooks that run whether or not
# the call is recorded (a capture or a context's end must never be missed),
# before the driver's call and after it.
GPU_ALWAYS = {
    "begin": ("ft_gpu_capture_begin()", "ft_gpu_capture_begun(r)"),
    "end": ("", "ft_gpu_capture_end(r)"),
    "ctxgone": ("ft_gpu_ctx_gone((uint64_t)(uintptr_t)ctx)", ""),
    "devgone": ("ft_gpu_dev_gone(dev)", ""),
}


def sampled(r):
    """submissions after which a timing event may be recorded: launches,
    a graph's launch (one unit), asynchronous copies and memsets"""
    if r["shape"] in ("LAUNCH", "LAUNCH_EX", "BATCH", "BATCH3D"):
        return True
    if r["api"] == "cuGraphLaunch":
        return True
    return r["shape"] in ("COPY", "COPY2D", "COPY3D") and r["rec"].get("async") == "1"


def u64(expr):
    return "(uint64_t)(uintptr_t)(%s)" % expr if expr not in ("", "0") else "0"


def body(i, r):
    sym, params = r["sym"], r["params"]
    args = ", ".join(arg_names(params))
    fptr = "CUresult (*real)(%s)" % params
    out = ["CUresult %s(%s)" % (sym, params), "{"]
    out.append("\t%s = (CUresult (*)(%s))ft_cu_real(%d);" % (fptr, params, i))
    out.append("\tif (ft_unlikely(!real))")
    out.append("\t\treturn CUDA_ERROR_NOT_INITIALIZED;")
    if r["shape"] == "RESOLVER":
        out.append("\tCUresult r = real(%s);" % args)
        out.append("\tif (r == CUDA_SUCCESS && pfn && *pfn && symbol)")
        out.append("\t\t*pfn = ft_cu_bind_proc(symbol, *pfn, version, (uint64_t)flags);")
        out.append("\treturn r;")
        out.append("}")
        return out
    gpu = r["rec"].get("gpu", "")
    if not gpu and r["shape"] in ("COPY", "COPY2D", "COPY3D") and r["rec"].get("async") == "0":
        gpu = "sync"        # a synchronous copy or memset drains its stream as a sync does
    pre, post = GPU_ALWAYS.get(gpu, ("", ""))
    if pre:
        out.append("\t%s;" % pre)
    out.append("\tstruct ft_thread *t = ft_enter(FT_G_CUDA);")
    if post:
        out.append("\tif (!t) {")
        out.append("\t\tCUresult r = real(%s);" % args)
        out.append("\t\t%s;" % post)
        out.append("\t\treturn r;")
        out.append("\t}")
    else:
        out.append("\tif (!t)")
        out.append("\t\treturn real(%s);" % args)
    kind, p = event_kind(r["api"]), r["ptsz"]
    rec = r["rec"]
    stream = "ft_cu_stream_of(%d, %s)" % (p, u64(rec.get("stream", "0")))
    if gpu == "sync":      # before the call's time and its driver marker
        out.append("\tft_gpu_before_sync(t, %s);" % stream)
    out.append("\tuint64_t t0 = ft_now();")
    # the driver's own locks and reads belong to this call: hooks below this
    # frame record nothing; a siglongjmp out of the driver (a handler) is
    # seen by the thread's next hook at or above it, which clears it
    out.append("\tFT_BUSY_WALK(t);\t/* the driver's own locks and reads belong to this call */")
    out.append("\tCUresult r = real(%s);" % args)
    out.append("\tt->busy = 0;")
    if post:
        out.append("\t%s;" % post)
    # after the call's record: a sample's cost is not the call's
    after = []
    if gpu == "sync":
        after.append("\tft_gpu_synced(t, %s, r);" % stream)
    elif gpu == "ctxsync":
        after.append("\tft_gpu_synced_all(r);")
    elif gpu == "ctxnew":
        after.append("\tft_gpu_ctx_new(r, r == CUDA_SUCCESS ? %s : 0);" % u64(rec["handle"]))
    elif sampled(r):
        s_expr = ("cfg ? cfg->hStream : 0" if r["shape"] == "LAUNCH_EX"
                  else "s" if r["shape"] == "LAUNCH" else rec["stream"])
        after.append("\tif (r == CUDA_SUCCESS)")
        fn = "ft_gpu_submitted" if r["shape"] in ("LAUNCH", "LAUNCH_EX") else "ft_gpu_submitted_call"
        after.append("\t\t%s(t, ft_cu_stream_of(%d, %s), t0);" % (fn, p, u64(s_expr)))
    if r["shape"] == "LAUNCH":
        out.append("\tft_cu_launch(t, %s, %d, %d, t0, r, f, gx, gy, gz, bx, by, bz, s);" % (kind, i, p))
    elif r["shape"] == "LAUNCH_EX":
        out.append("\tft_cu_launch(t, %s, %d, %d, t0, r, f, cfg ? cfg->gridDimX : 0, "
                   "cfg ? cfg->gridDimY : 0, cfg ? cfg->gridDimZ : 0, cfg ? cfg->blockDimX : 0, "
                   "cfg ? cfg->blockDimY : 0, cfg ? cfg->blockDimZ : 0, cfg ? cfg->hStream : 0);"
                   % (kind, i, p))
    elif r["shape"] == "HANDLE":
        out.append("\tft_cu_handle(t, %s, %d, %d, t0, r, %s, %s, %s);"
                   % (kind, i, p, rec["sync"], u64(rec["stream"]),
                      "r == CUDA_SUCCESS ? %s : 0" % u64(rec["handle"])))
    elif r["shape"] == "COPY":
        ptrs = [x for x in rec["ptrs"].split(",") if x]
        p1 = u64(ptrs[0]) if len(ptrs) > 0 else "0"
        p2 = u64(ptrs[1]) if len(ptrs) > 1 else "0"
        out.append("\tft_cu_copy(t, %s, %d, %d, t0, r, %s, %s, %s, (uint64_t)(%s), %s, %s, %d);"
                   % (kind, i, p, rec["dir"], rec["async"], u64(rec["stream"]), rec["bytes"],
                      p1, p2, len(ptrs)))
    elif r["shape"] == "MEM":
        out.append("\tft_cu_mem(t, %s, %d, %d, t0, r, %s, %s, r == CUDA_SUCCESS ? %s : 0, (uint64_t)(%s));"
                   % (kind, i, p, rec["sync"], u64(rec["stream"]), u64(rec["ptr"]), rec["bytes"]))
    elif r["shape"] in ("COPY2D", "COPY3D"):
        # peer=1 (cuMemcpy3DPeer): a copy between device sides is dir 4, not 3
        out.append("\tft_cu_copy_struct(t, %s, %d, %d, t0, r, %s, %s, c ? &c->srcMemoryType : 0, "
                   "c ? &c->dstMemoryType : 0, c ? (uint64_t)c->WidthInBytes * c->Height%s : 0, %d);"
                   % (kind, i, p, rec["async"], u64(rec["stream"]),
                      " * c->Depth" if r["shape"] == "COPY3D" else "",
                      4 if rec.get("peer") == "1" else 3))
    elif r["shape"] == "BATCH":
        out.append("\tft_cu_copy_batch(t, %s, %d, %d, t0, r, %s, dsts, srcs, sizes, count);"
                   % (kind, i, p, u64(rec["stream"])))
    elif r["shape"] == "BATCH3D":
        out.append("\tft_cu_copy_batch3d(t, %s, %d, %d, t0, r, %s, opList, numOps);"
                   % (kind, i, p, u64(rec["stream"])))
    elif r["shape"] == "NCCL":
        out.append("\tft_cu_nccl(t, %s, %d, t0, r, %s, %s, (uint64_t)(%s), %s, %s, %s);"
                   % (kind, i, rec["sync"], u64(rec["stream"]), rec["bytes"], rec["dtype"],
                      rec["peer"], u64(rec["comm"])))
    else:
        raise SystemExit("unknown shape %s for %s" % (r["shape"], sym))
    out += after
    out.append("\treturn r;")
    out.append("}")
    return out


def layout_asserts(what):
    """STRUCT_OFFSETS as _Static_asserts against the headers in scope"""
    return ['_Static_assert(%s == %d, "%s.%s: %s");'
            % ("offsetof(%s, %s)" % (t, f) if f else "sizeof(%s)" % t, o, t, f or "size", what)
            for t, f, o in STRUCT_OFFSETS]


def write_wrappers(rows, path):
    lines = [
        "/* Generated by scripts/gen_cuda.py from shim/cuda.tsv. Do not edit. */",
        "#include <stddef.h>",
        "#include \"cuda_shim.h\"",
        "",
    ] + layout_asserts("shim/cuda_types.h differs from what the wrappers read") + [
        "",
        "#pragma GCC visibility push(default)     /* the wrappers are exported */",
    ]
    for i, r in enumerate(rows):
        lines += body(i, r)
        lines.append("")
    lines.append("#pragma GCC visibility pop")
    lines.append("struct ft_cu_entry ft_cu_table[] = {")
    for r in rows:
        lines.append("\t{ \"%s\", \"%s\", %d, %d, (void *)%s, NULL, NULL, 0 },"
                     % (r["sym"], r["api"], r["since"], r["ptsz"], r["sym"]))
    lines.append("};")
    lines.append("const int ft_cu_count = %d;" % len(rows))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_check(rows, path, ptds):
    """cuda.h declares each API under its current variant's name (its macros
    map cuMemcpyDtoH to cuMemcpyDtoH_v2, or _v2_ptds with per-thread default
    stream), so every current variant can be checked by its exact name.
    Superseded variants with other parameters (the pre-3.2 32-bit ABI) are
    not declared by cuda.h and are left out."""
    lines = ["/* Generated by scripts/gen_cuda.py: wrapper signatures vs cuda.h. */"]
    if ptds:
        lines.append("#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1")
    lines.append("#include <cuda.h>")
    lines.append("#include <stddef.h>")
    lines += layout_asserts("cuda.h layout differs")
    for n, r in enumerate(rows):
        if bool(r["ptsz"]) != ptds or r["shape"] == "NCCL":
            continue
        newer = [o for o in rows if o["api"] == r["api"] and o["ptsz"] == r["ptsz"]
                 and o["since"] > r["since"] and o["params"] != r["params"]]
        if newer:
            continue
        lines.append("typedef CUresult (*check_%d)(%s);" % (n, r["params"]))
        lines.append("_Static_assert(__builtin_types_compatible_p(__typeof__(&%s), check_%d), "
                     "\"%s: parameters differ from cuda.h\");" % (r["sym"], n, r["sym"]))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    rows = read_rows(sys.argv[1])
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    write_wrappers(rows, os.path.join(out, "cuda_wrappers.c"))
    write_check(rows, os.path.join(out, "cuda_check_default.c"), False)
    write_check(rows, os.path.join(out, "cuda_check_ptds.c"), True)


if __name__ == "__main__":
    main()
