"""The run directory cannot be steered (issue 19, items 13, 14, 16): a
symbolic link as its last component is refused, a trailing "/" too; an
existing directory is used only when it belongs to this user and no other
user can write it; the default name is unique per run; a relative
FEEDTRACE_OUT reaches children as an absolute path."""
import os
import re
import subprocess

import pytest

from conftest import clean_env, preload

TRUE = "/bin/true"


def run(argv, cwd, out=None, extra=None):
    env = clean_env()
    env["LD_PRELOAD"] = preload()
    if out is not None:
        env["FEEDTRACE_OUT"] = out
    env.update(extra or {})
    return subprocess.run(argv, cwd=str(cwd), env=env, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("slash", ["", "/"])
def test_symlink_run_directory_refused(tmp_path, slash):
    target = tmp_path / "victim"
    target.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(target)
    r = run([TRUE], tmp_path, str(tmp_path / "link") + slash)
    assert r.returncode == 0
    assert r.stderr == ("feedtrace: run directory %s: is a symbolic link: not following it "
                        "(Too many levels of symbolic links); not tracing\n"
                        % (str(tmp_path / "link") + slash))
    assert os.listdir(target) == []


def test_run_directory_others_can_write_refused(tmp_path):
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o777)
    r = run([TRUE], tmp_path, str(d))
    assert r.returncode == 0
    assert r.stderr == ("feedtrace: run directory %s: is writable by other users "
                        "(chmod go-w) (Operation not permitted); not tracing\n" % d)
    assert os.listdir(d) == []
    os.chmod(d, 0o755)                          # the user's own, not writable by others
    r = run([TRUE], tmp_path, str(d))
    assert (r.returncode, r.stderr) == (0, "")
    assert len(os.listdir(d)) == 1


def test_run_directory_of_another_user_refused(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making a directory of another user needs root")
    d = tmp_path / "theirs"
    d.mkdir(mode=0o700)
    os.chown(d, 65534, 65534)                   # nobody
    r = run([TRUE], tmp_path, str(d))
    assert r.returncode == 0
    assert r.stderr == ("feedtrace: run directory %s: belongs to another user "
                        "(Operation not permitted); not tracing\n" % d)
    assert os.listdir(d) == []


def test_default_name_unique_per_run(tmp_path):
    # two runs started in the same second get two directories
    procs = [subprocess.Popen(["/bin/sh", "-c", "exec /bin/true"], cwd=str(tmp_path),
                              env={**clean_env(), "LD_PRELOAD": preload()})
             for _ in range(2)]
    pids = {p.pid for p in procs}
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    names = sorted(os.listdir(tmp_path))
    assert len(names) == 2, names
    got = set()
    for n in names:
        m = re.fullmatch(r"feedtrace-\d{8}-\d{6}-(\d+)", n)
        assert m, n
        got.add(int(m.group(1)))
        assert len(os.listdir(tmp_path / n)) == 2   # sh, then the true it exec.d
    assert got == pids


def test_relative_out_reaches_children_absolute(tmp_path):
    # the shell changes directory, then runs a child: the child's trace is
    # in the same run directory, not in /rel-trace
    r = run(["/bin/sh", "-c", "cd / && /bin/true; echo done"], tmp_path, "rel-trace")
    assert (r.returncode, r.stdout, r.stderr) == (0, "done\n", "")
    files = os.listdir(tmp_path / "rel-trace")
    assert len(files) == 2, files
    assert not os.path.exists("/rel-trace")
