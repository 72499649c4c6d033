#!/usr/bin/env python3
# One-off bootstrap of tests/simgpu/variants.tsv from the CUDA headers (needs a
# CUDA toolkit; the build never runs this). It keeps the "impl" column of an
# existing table, so it can be re-run after a toolkit upgrade.
#
# Rule (checked against the #defines in cuda.h): the PFN_<name>_v<ver> typedefs
# of cudaTypedefs.h list a name's ABI versions; the oldest is exported as <name>,
# the next ones as <name>_v2, _v3...; a _ptds/_ptsz typedef appends that suffix
# to the newest plain variant of the same or lower version.
import collections, re, sys

inc = sys.argv[1] if len(sys.argv) > 1 else '/usr/local/cuda/include'
table = sys.argv[2] if len(sys.argv) > 2 else 'tests/simgpu/variants.tsv'
extra_impl = set(sys.argv[3].split(',')) if len(sys.argv) > 3 else set()

hdrs = ['cudaTypedefs.h', 'cudaGLTypedefs.h', 'cudaEGLTypedefs.h',
        'cudaVDPAUTypedefs.h', 'cudaProfilerTypedefs.h']
src = ''.join(open(f'{inc}/{h}').read() for h in hdrs)
versions = collections.defaultdict(set)
for m in re.finditer(r'PFN_(cu\w+?)_v(\d+)(_ptds|_ptsz)?\)', src):
    versions[m.group(1)].add((int(m.group(2)), m.group(3) or ''))

impl = set(extra_impl)
try:
    for line in open(table):
        f = line.rstrip('\n').split('\t')
        if not line.startswith('#') and len(f) == 5 and f[4] == 'impl':
            impl.add(f[3])
except FileNotFoundError:
    pass

rows = []
for name in sorted(versions):
    plain = sorted(v for v, sfx in versions[name] if not sfx)
    sym = {v: name if i == 0 else f'{name}_v{i + 1}' for i, v in enumerate(plain)}
    for v in plain:
        rows.append((name, v, 0, sym[v]))
    for v, sfx in sorted(x for x in versions[name] if x[1]):
        base = [sym[p] for p in plain if p <= v]
        rows.append((name, v, 2, (base[-1] if base else name) + sfx))

with open(table, 'w') as out:
    out.write('# name\tversion\tflags\tsymbol\tkind\n')
    for name, v, fl, s in rows:
        out.write(f'{name}\t{v}\t{fl}\t{s}\t{"impl" if s in impl else "stub"}\n')
print(f'{len(rows)} rows, {len(impl)} implemented symbols', file=sys.stderr)
