"""The feedtrace command's command line: main.c's table of commands (the
usage lists each, each answers --help, an unknown one is refused with the
usage) and the one option loop of cli.c (the shared analysis and reading
options taken by the commands whose tables hold them, refused by the
others, a bad value or a missing one in one line)."""
import subprocess

from conftest import TOOL

COMMANDS = ["run", "dump", "convert", "report", "diff", "ranks", "open", "capture", "flight"]


def tool(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def test_usage_lists_the_commands_in_order():
    r = tool("--help")
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0] == "usage: feedtrace COMMAND ..."
    assert [l.split()[0] for l in lines[1:1 + len(COMMANDS)]] == COMMANDS
    assert all(l.startswith("  ") for l in lines[1:1 + len(COMMANDS)])
    assert lines[-1].split()[0] == "--version"
    for same in ("-h", "help"):
        assert tool(same).stdout == r.stdout


def test_each_command_answers_its_help():
    for name in COMMANDS:
        if name == "run":                   # `feedtrace run` belongs to the traced tier
            continue
        r = tool(name, "--help")
        assert r.returncode == 0, name
        assert r.stderr == "", name
        assert r.stdout.startswith("usage: feedtrace %s " % name) or \
            r.stdout.startswith("usage: feedtrace %s\n" % name), name


def test_an_unknown_command_is_refused_with_the_usage():
    r = tool("bogus")
    assert r.returncode == 2 and r.stdout == ""
    first, rest = r.stderr.split("\n", 1)
    assert first == "feedtrace: unknown command 'bogus'"
    assert rest == tool("--help").stdout


def first_err(*args):
    r = tool(*args)
    return r.returncode, r.stderr.split("\n", 1)[0]


def test_the_analysis_options_are_shared_by_report_diff_convert():
    for cmd in ("report", "diff", "convert"):
        assert first_err(cmd, "--gap-ms", "abc", "/nonexistent") == \
            (2, "feedtrace %s: --gap-ms needs a positive number, not 'abc'" % cmd)
        assert first_err(cmd, "--storm-reads", "1.5", "/nonexistent") == \
            (2, "feedtrace %s: --storm-reads needs a positive whole number, not '1.5'" % cmd)
        assert first_err(cmd, "--gap-ms") == (2, "feedtrace %s: --gap-ms needs a value" % cmd)
    # ranks takes the reading options only; dump neither
    assert first_err("ranks", "--gap-ms", "5", "/nonexistent") == \
        (2, "feedtrace ranks: unknown option --gap-ms")
    assert first_err("dump", "--mixed", "/nonexistent") == \
        (2, "feedtrace dump: unknown option --mixed")


def test_the_reading_options_are_shared_by_report_diff_convert_ranks():
    for cmd in ("report", "diff", "convert", "ranks"):
        assert first_err(cmd, "--reorder-ms", "bad", "/nonexistent") == \
            (2, "feedtrace %s: --reorder-ms needs milliseconds from 0 to 3600000, not 'bad'"
             % cmd)


def test_diff_takes_the_shared_options_after_the_separator():
    assert first_err("diff", "a", "--", "b", "--storm-reads", "1.5") == \
        (2, "feedtrace diff: --storm-reads needs a positive whole number, not '1.5'")


def test_unknown_options_in_one_line():
    for cmd in ("report", "diff", "convert", "ranks", "dump", "capture", "flight"):
        assert first_err(cmd, "--bogus") == (2, "feedtrace %s: unknown option --bogus" % cmd)
        assert first_err(cmd, "-z") == (2, "feedtrace %s: unknown option -z" % cmd)
    assert first_err("open", "--bogus") == (2, "feedtrace open: unknown option --bogus")
