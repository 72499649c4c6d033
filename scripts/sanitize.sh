#!/bin/sh
# scripts/sanitize.sh SAN [pytest args...]: the whole test suite against a
# build made with a sanitizer. SAN: asan, ubsan, tsan, or asan-ubsan (both
# in one build: what CI runs). Library, tool, test programs, simulated
# driver and the writer's test are built into build/SAN (SANFLAGS), then
# pytest runs with FT_BUILD=build/SAN (tests/conftest.py).
#
# A program the tests run that is not sanitized itself (python3) gets the
# sanitizer runtime preloaded before libfeedtrace.so (FT_PRELOAD_PREFIX).
# Every sanitizer report, from any process (tool, traced program, test
# program), is also written to build/SAN/reports/: the run fails if any is
# there at the end, even where a test did not look at an exit status.
# Leak detection is off here (python3 and the test programs are not ours
# to keep leak-free; the fuzzer checks the reader for leaks).
set -e
cd "$(dirname "$0")/.."
san=$1
[ $# -gt 0 ] && shift
CC=${CC:-cc}
case "$san" in
asan)       flags="-fsanitize=address"; rt=libasan.so ;;
ubsan)      flags="-fsanitize=undefined -fno-sanitize-recover=all"; rt= ;;
tsan)       flags="-fsanitize=thread"; rt=libtsan.so ;;
asan-ubsan) flags="-fsanitize=address,undefined -fno-sanitize-recover=all"; rt=libasan.so ;;
*) echo "usage: scripts/sanitize.sh asan|ubsan|tsan|asan-ubsan [pytest args]" >&2; exit 2 ;;
esac
flags="$flags -fno-omit-frame-pointer"
B=build/$san
start=$(date +%s)
# examples too: tests/traced/test_examples.py makes them without SANFLAGS, which
# only builds what is missing
make --no-print-directory -s -j2 BUILD=$B SANFLAGS="$flags" OPT=-O1 all sanitize-progs examples >/dev/null
rm -rf $B/reports
mkdir -p $B/reports
R=$(pwd)/$B/reports

export FT_BUILD=$(pwd)/$B FT_SANITIZER=$san
if [ -n "$rt" ]; then
	FT_PRELOAD_PREFIX=$($CC -print-file-name=$rt)
	export FT_PRELOAD_PREFIX
fi
common="halt_on_error=1:print_stacktrace=1:log_path=$R/report:log_exe_name=1"
# verify_asan_link_order=0: tests that set LD_PRELOAD themselves put
# libfeedtrace.so before a sanitized program's own runtime
export ASAN_OPTIONS="$common:detect_leaks=0:verify_asan_link_order=0:abort_on_error=0"
export UBSAN_OPTIONS="$common"
# die_after_fork=0: every traced process has a flusher thread, and a forked
# child starts its own (docs/ARCHITECTURE.md)
# suppressions: reports TSan cannot judge, each explained in the file;
# history_size=7 (the most): a python3 that imports torch makes enough
# traced calls that the default history lost the earlier stack of a report
export TSAN_OPTIONS="$common:report_signal_unsafe=1:second_deadlock_stack=1:die_after_fork=0:history_size=7:suppressions=$(pwd)/scripts/tsan.supp"
rc=0
# signals a background shell ignores (SIGINT, SIGQUIT; SIGHUP under nohup)
# back to default: the lifecycle tests check what the program inherits
/usr/bin/python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
os.execv(sys.executable, [sys.executable, "-m", "pytest"] + sys.argv[1:])' \
	-q -p no:cacheprovider "$@" tests || rc=$?
n=$(ls $R | wc -l)
if [ "$n" -gt 0 ]; then
	echo "sanitize.sh: $san: $n sanitizer reports in $B/reports:" >&2
	for f in $R/*; do
		echo "==== $f" >&2
		head -60 "$f" >&2
	done
	rc=1
fi
# on success pytest's summary stays the last line (CI reads it)
[ $rc -eq 0 ] || echo "sanitize.sh: $san: $(($(date +%s) - start)) s, exit $rc" >&2
exit $rc
