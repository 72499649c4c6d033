#!/bin/sh
# scripts/fuzz.sh: the reader/converter fuzzer (tests/fuzz/fuzz_reader.c).
#
#   scripts/fuzz.sh build            build/fuzz/fuzz_reader (clang, libFuzzer,
#                                    ASan, UBSan)
#   scripts/fuzz.sh seeds            build/fuzz/seeds: real traces of a few
#                                    tests/progs programs + synthetic ones
#   scripts/fuzz.sh run SECONDS [RUNS] [libFuzzer flags...]
#                                    fuzz from the seeds and build/fuzz/corpus
#                                    (kept between runs); RUNS=0: no limit
#   scripts/fuzz.sh check            replay the seeds, tests/fuzz/regress (inputs
#                                    that once failed) and the kept corpus
#
# Crashes, leaks, timeouts and out-of-memory inputs are written to
# build/fuzz/artifacts/ and make the run fail. Limits: 5 s per input,
# 2048 MB RSS, 256 MB per malloc (a chunk decodes to at most 64 MiB).
# Inputs up to FT_FUZZ_MAX_LEN bytes (2 MiB): the large seeds (a zero
# tail of 1 MiB, repeated chunks: tests/fuzz/gen_corpus.py) are read
# whole; a 64 KiB cap hid the reader's quadratic resynchronisation.
set -e
cd "$(dirname "$0")/.."
F=build/fuzz
REC=${FT_FUZZ_REC_BUILD:-build}   # the build that records the seed traces
CLANG=${CLANG:-clang}
PYTHON=${PYTHON:-/usr/bin/python3}
LIMITS="-timeout=5 -rss_limit_mb=2048 -malloc_limit_mb=256 -close_fd_mask=3"
MAX_LEN=${FT_FUZZ_MAX_LEN:-2097152}

build() {
	mkdir -p $F/gen $F/artifacts $F/corpus
	[ -f $F/gen/perfetto.pb-c.c ] && [ $F/gen/perfetto.pb-c.c -nt converter/out/perfetto.proto ] ||
		protoc-c --proto_path=converter/out --c_out=$F/gen converter/out/perfetto.proto
	srcs="$(${MAKE:-make} -s --no-print-directory print-fuzz-srcs) converter/out/pftrace.c
	      $F/gen/perfetto.pb-c.c tests/fuzz/fuzz_reader.c"
	# rebuild only when a source is newer than the harness
	if [ -x $F/fuzz_reader ] && [ -z "$(find $srcs converter/*/*.h libfeedtrace/*.h libfeedtrace/format/* \
	     -newer $F/fuzz_reader 2>/dev/null)" ]; then
		return 0
	fi
	$CLANG -g -O1 -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		$(${MAKE:-make} -s --no-print-directory print-fuzz-cflags) -I$F/gen -o $F/fuzz_reader.$$ $srcs -lzstd -lprotobuf-c -ldw -lelf -liberty -ljson-c -lm
	mv $F/fuzz_reader.$$ $F/fuzz_reader
}

seeds() {
	# recorded again when the recorder changed
	[ -f $F/seeds/.done ] && [ ! $REC/libfeedtrace.so -nt $F/seeds/.done ] &&
		[ ! tests/fuzz/gen_corpus.py -nt $F/seeds/.done ] && return 0
	make --no-print-directory -s BUILD=$REC all $REC/tests/io_read $REC/tests/life_prog \
		$REC/tests/conv_storm $REC/tests/conv_lock $REC/tests/cu2d_prog simgpu >/dev/null
	t=$(mktemp -d)
	trap 'rm -rf "$t"' EXIT
	mkdir "$t/data"
	head -c 65536 /dev/urandom > "$t/data/f000"
	cp "$t/data/f000" "$t/data/f001"
	pre="$REC/libfeedtrace.so"
	LD_PRELOAD=$pre FEEDTRACE_OUT=$t/r1 $REC/tests/io_read reads 20 100 "$t/data/f000" >/dev/null
	LD_PRELOAD=$pre FEEDTRACE_OUT=$t/r2 $REC/tests/life_prog fork "$t/data/f000" 3 2 0 >/dev/null
	LD_PRELOAD=$pre FEEDTRACE_OUT=$t/r3 $REC/tests/life_prog threads "$t/data/f000" 3 5 >/dev/null
	LD_PRELOAD=$pre FEEDTRACE_OUT=$t/r4 $REC/tests/conv_storm "$t/data" 2 40 64 >/dev/null
	LD_PRELOAD=$pre FEEDTRACE_OUT=$t/r5 $REC/tests/conv_lock contended 2 >/dev/null
	LD_PRELOAD=$pre FEEDTRACE_OUT=$t/r6 LD_LIBRARY_PATH=$REC/simgpu $REC/tests/cu2d_prog >/dev/null
	LD_PRELOAD=$pre FEEDTRACE_OUT=$t/r7 $REC/tests/life_prog execv "$t/data/f000" 2 2 >/dev/null
	mkdir "$t/apis"
	for f in f_open64 f_openat f_pread f_readv f_fopen f_mmap; do cp "$t/data/f000" "$t/apis/$f"; done
	LD_PRELOAD=$pre FEEDTRACE_OUT=$t/r8 $REC/tests/io_read apis "$t/apis" >/dev/null
	rm -rf $F/seeds
	$PYTHON tests/fuzz/gen_corpus.py $F/seeds $t/r*/*.ft
	touch $F/seeds/.done
}

case "$1" in
build) build ;;
seeds) seeds ;;
run)
	secs=${2:-60}
	runs=${3:-0}
	shift
	[ $# -gt 0 ] && shift
	[ $# -gt 0 ] && shift
	build
	seeds
	mkdir -p $F/corpus $F/artifacts
	set -- $LIMITS -max_len=$MAX_LEN -max_total_time=$secs -print_final_stats=1 \
		-dict=tests/fuzz/ft.dict -artifact_prefix=$F/artifacts/ "$@"
	[ "$runs" != 0 ] && set -- -runs=$runs "$@"
	exec $F/fuzz_reader "$@" $F/corpus $F/seeds tests/fuzz/regress
	;;
check)
	build
	seeds
	exec $F/fuzz_reader $LIMITS -max_len=$MAX_LEN -runs=0 $F/seeds tests/fuzz/regress $F/corpus
	;;
*)
	sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
