#!/usr/bin/env python3
"""Runs every shell block of README.md and docs/*.md, so that the commands the
docs show keep working (ctest: docs.commands).

  check_doc_commands.py --root SRC --bin BUILD/bin [--mpi|--no-mpi]
                        [--timeout SECONDS] [--list] [FILE.md ...]

A shell block is a fenced block whose info string is sh, bash, shell or
console (in a console block only the lines that start with "$ " are
commands, the rest is output). Other fences (text, mlir, cpp, ...) are not
run: a synopsis with placeholders (FILE.mlir) belongs in a text block.

Each file's blocks run in order, each with `bash -e -o pipefail`, in one
temporary directory per file: a later block may use what an earlier one
made. That directory holds a symlink to every top-level entry of the
repository and `build` -> the build directory, so the docs' commands run as
they are written from the repository root (examples/..., testing/tools/...)
and what they write stays in the temporary directory. The build's bin/ is
first on PATH; SHARDLIN_ROOT is the repository root. Open MPI may run as root
and oversubscribe (OMPI_ALLOW_RUN_AS_ROOT, OMPI_MCA_rmaps_base_oversubscribe),
so the docs can show a plain `mpirun -np 4 ...`.

A block that must not run here says why on the line before its fence:

  <!-- doc-check: skip (needs a GPU) -->

with one of the reasons in REASONS. Any other marker is an error. Without
--mpi (a build without MPI), blocks that call mpirun are skipped as "no MPI in
this build".

The check fails naming FILE:LINE (the opening fence) of every block that
exits non-zero or runs past --timeout, and prints its output; it prints the
number of blocks run and skipped per reason.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REASONS = (
    "needs a GPU",
    "the test suite's own command",
    "the build or install itself",
    "a long benchmark",
)
NO_MPI = "no MPI in this build"
SHELL_LANGS = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^\s`]*)")
MARKER = re.compile(r"^\s*<!--\s*doc-check:\s*(.*?)\s*-->\s*$")
SKIP = re.compile(r"^skip\s*\((.*)\)$")


class Block:
    def __init__(self, path, line, lang, text, skip, error):
        self.path, self.line, self.lang = path, line, lang
        self.text, self.skip, self.error = text, skip, error

    def where(self, root):
        return "%s:%d" % (os.path.relpath(self.path, root), self.line)

    def script(self):
        if self.lang != "console":
            return self.text
        cmds, cont = [], False
        for ln in self.text.splitlines():
            if ln.startswith("$ "):
                cmds.append(ln[2:])
                cont = ln.endswith("\\")
            elif cont:
                cmds.append(ln)
                cont = ln.endswith("\\")
        return "\n".join(cmds) + "\n"


def blocks_of(path):
    """The shell blocks of one Markdown file, with their markers."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines) and not re.match(
                r"^\s*" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence), lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1  # the closing fence
        if lang not in SHELL_LANGS:
            continue
        # The marker, if any: the nearest non-blank line before the fence.
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        skip = error = None
        mm = MARKER.match(lines[j]) if j >= 0 else None
        if mm:
            sm = SKIP.match(mm.group(1))
            if not sm:
                error = "unknown doc-check marker %r (write: skip (REASON))" % mm.group(1)
            elif sm.group(1) not in REASONS:
                error = "skip reason %r is not one of: %s" % (
                    sm.group(1), "; ".join(REASONS))
            else:
                skip = sm.group(1)
        out.append(Block(path, start + 1, lang, "\n".join(body) + "\n", skip, error))
    return out


def run_block(script, cwd, env, timeout):
    """Runs one block in a process group of its own; on timeout the whole
    group (mpirun and its ranks included) is killed. Returns (exit status or
    None on timeout, output)."""
    p = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out.decode(errors="replace")
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = p.communicate()
        return None, out.decode(errors="replace")


def sandbox(root, build_dir):
    """A temporary directory that looks like the repository root."""
    d = tempfile.mkdtemp(prefix="shardlin-doc-")
    for name in os.listdir(root):
        if name in ("build", ".git") or name.startswith("build-"):
            continue
        os.symlink(os.path.join(root, name), os.path.join(d, name))
    if build_dir:
        os.symlink(build_dir, os.path.join(d, "build"))
    return d


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", required=True, help="the repository root")
    p.add_argument("--bin", required=True, help="the build's bin/ directory")
    p.add_argument("--mpi", dest="mpi", action="store_true", default=None)
    p.add_argument("--no-mpi", dest="mpi", action="store_false")
    p.add_argument("--timeout", type=float, default=120,
                   help="seconds per block (default 120)")
    p.add_argument("--list", action="store_true",
                   help="list the blocks and their markers, run nothing")
    p.add_argument("files", nargs="*",
                   help="Markdown files (default: README.md and docs/*.md)")
    a = p.parse_args()

    root = os.path.abspath(a.root)
    bindir = os.path.abspath(a.bin)
    if a.mpi is None:
        a.mpi = shutil.which("mpirun") is not None
    files = [os.path.abspath(f) for f in a.files] or (
        [os.path.join(root, "README.md")] +
        sorted(os.path.join(root, "docs", f) for f in os.listdir(os.path.join(root, "docs"))
               if f.endswith(".md")))

    env = dict(os.environ)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["SHARDLIN_ROOT"] = root
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    env.pop("MAKEFLAGS", None)

    total = ran = passed = bad = listed = 0
    skipped = {}
    failures = []
    for path in files:
        blocks = blocks_of(path)
        total += len(blocks)
        if not blocks:
            continue
        work = None if a.list else sandbox(root, os.path.dirname(bindir))
        try:
            for b in blocks:
                where = b.where(root)
                if b.error:
                    bad += 1
                    failures.append((where, b.error, ""))
                    print("FAIL %s: %s" % (where, b.error))
                    continue
                skip = b.skip
                if not skip and not a.mpi and re.search(r"\bmpirun\b", b.script()):
                    skip = NO_MPI
                if skip:
                    skipped[skip] = skipped.get(skip, 0) + 1
                    print("skip %s (%s)" % (where, skip))
                    continue
                if a.list:
                    listed += 1
                    print("run  %s" % where)
                    continue
                ran += 1
                t0 = time.monotonic()
                rc, out = run_block(b.script(), work, env, a.timeout)
                dt = time.monotonic() - t0
                if rc == 0:
                    passed += 1
                    print("ok   %s (%.1f s)" % (where, dt))
                    continue
                why = ("ran past %g s" % a.timeout) if rc is None else ("exit %d" % rc)
                failures.append((where, why, out))
                print("FAIL %s: %s (%.1f s)" % (where, why, dt))
                tail = out.splitlines()[-30:]
                for ln in tail:
                    print("     | " + ln)
        finally:
            if work:
                shutil.rmtree(work, ignore_errors=True)

    nskip = sum(skipped.values())
    if a.list:
        print("\n%d shell blocks: %d to run, %d skipped, %d bad markers" % (total, listed, nskip, bad))
        for reason in list(REASONS) + [NO_MPI]:
            if skipped.get(reason):
                print("  skipped, %s: %d" % (reason, skipped[reason]))
        return 1 if bad else 0
    print("\n%d shell blocks: %d run (%d passed, %d failed), %d skipped, %d bad markers" % (
        total, ran, passed, ran - passed, nskip, bad))
    for reason in list(REASONS) + [NO_MPI]:
        if skipped.get(reason):
            print("  skipped, %s: %d" % (reason, skipped[reason]))
    if failures:
        print("failing blocks:")
        for where, why, _ in failures:
            print("  %s: %s" % (where, why))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
