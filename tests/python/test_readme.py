"""The README's promise on a fresh clone: its `make run`, then its Python snippet as written.

`make run` builds what the snippet imports (the package and its extension: an empty
build/python/eacgm imports as a namespace package without `eacgm.trace`), and the snippet
runs against the build with PYTHONPATH=build/python and Debian's python3, a CUDA test
program standing in for ./my_cuda_app."""
import os
import pathlib
import re
import shlex
import subprocess

ROOT = pathlib.Path(__file__).parents[2]


def readme_snippet():
    text = (ROOT / "README.md").read_text()
    found = re.search(r"From Python.*?```python\n(.*?)```", text, re.S)
    assert found, "README.md has no Python snippet after 'From Python'"
    return found.group(1)


def make_run_targets(bin_dir):
    """The targets `make run` builds, as its recipe says (`make -n` runs nothing)."""
    recipe = subprocess.run(["make", "-n", "-C", str(ROOT), "run", f"BUILD={bin_dir}"], capture_output=True,
                            text=True, check=True).stdout
    for line in recipe.splitlines():
        words = shlex.split(line)
        if words[:2] == ["cmake", "--build"] and "--target" in words:
            return words[words.index("--target") + 1:]
    raise AssertionError(f"no build step in make run's recipe:\n{recipe}")


def test_make_run_builds_the_package_and_its_extension(bin_dir):
    commands = subprocess.run(["ninja", "-C", str(bin_dir), "-t", "commands", *make_run_targets(bin_dir)],
                              capture_output=True, text=True, check=True).stdout
    package = bin_dir / "python" / "eacgm"
    assert str(package / "__init__.py") in commands, "make run does not copy the package's files"
    assert re.search(r"-o \S*python/eacgm/_eacgm\S*\.so", commands), "make run does not build the extension"


def test_readme_snippet_runs_as_written(bin_dir, tmp_path):
    (tmp_path / "my_cuda_app").symlink_to(bin_dir / "cuda_calls")
    env = dict(os.environ, PYTHONPATH=str(bin_dir / "python"))
    ran = subprocess.run(["/usr/bin/python3", "-c", readme_snippet()], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    # The snippet's line is the last: the test program prints its calls' return codes before it.
    calls, first = ran.stdout.splitlines()[-1].split()[:2]
    assert int(calls) > 0, ran.stdout
    assert "cuda" in first, ran.stdout
