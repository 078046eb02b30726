#!/usr/bin/env python3
"""Clang's thread-safety analysis over every source file of src/, as errors.

Reads the compile commands of an existing (g++) build, runs each src/ file
through clang++ with -fsyntax-only -Wthread-safety -Werror: no code is
generated, so this costs a fraction of a second build while checking every
GUARDED_BY / REQUIRES annotation (common/thread_annotations.h). Exits 1 when
any file fails, printing clang's messages.

  tools/check_thread_safety.py [--build build] [--jobs 2] [--clang clang++-14]
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import time

# Flags g++ takes and clang refuses or reads differently.
DROP = {"-Wno-restrict", "-fno-semantic-interposition"}


SELF_TEST = """
#include "common/thread_annotations.h"
struct Counter {
  void Bump() { ++n; }  // no lock: must be refused
  inferd::Mutex mu;
  int n GUARDED_BY(mu) = 0;
};
"""


def clang_command(entry, clang):
    args = entry.get("arguments") or shlex.split(entry["command"])
    while args and os.path.basename(args[0]) in ("ccache", "sccache"):
        args = args[1:]
    out = [clang]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a in DROP or a == "-c":
            continue
        out.append(a)
    # -Wall -Wextra -Werror of the build stay on: clang's warnings count too.
    return out + ["-fsyntax-only", "-Wthread-safety", "-Wthread-safety-beta",
                  "-Werror", "-Wno-unknown-warning-option"]


UNITY_FILE = re.compile(r"unity_\d+_cxx\.cxx$")
UNITY_INCLUDE = re.compile(r'^#include "(.+)"$', re.M)


def unity_members(entries):
    """The compile commands with each unity batch (INFERD_UNITY) replaced by
    one command per file it includes, so that every file is checked (and
    named) on its own."""
    out = []
    for e in entries:
        path = os.path.join(e["directory"], e["file"])
        if not UNITY_FILE.search(e["file"]):
            out.append(e)
            continue
        with open(path) as f:
            members = UNITY_INCLUDE.findall(f.read())
        args = e.get("arguments") or shlex.split(e["command"])
        for m in members:
            out.append({"directory": e["directory"], "file": m,
                        "arguments": [m if a in (e["file"], path) else a for a in args]})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--clang", default="clang++-14")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = os.path.join(root, "src") + os.sep
    # src/backend/torch/ is left out: libtorch 1.13's headers do not compile
    # with clang 14 against libstdc++ 12 (ivalue_inl.h assigns through a const
    # vector element), and the folder only calls into torch (no locks of ours).
    torch = os.path.join(src, "backend", "torch") + os.sep
    with open(os.path.join(args.build, "compile_commands.json")) as f:
        entries = [e for e in unity_members(json.load(f))
                   if (p := os.path.realpath(os.path.join(e["directory"], e["file"]))).startswith(src)
                   and not p.startswith(torch)]
    if not entries:
        print("check_thread_safety: no src/ files in the compile commands", file=sys.stderr)
        return 1

    def run(entry):
        cmd = clang_command(entry, args.clang)
        p = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True)
        return entry["file"], p.returncode, p.stderr

    # The check must be able to fail: a missed lock has to be an error.
    probe = subprocess.run(
        [args.clang, "-std=c++20", "-fsyntax-only", "-Wthread-safety", "-Werror",
         "-I", os.path.join(root, "src"), "-x", "c++", "-"],
        input=SELF_TEST, capture_output=True, text=True)
    if probe.returncode == 0 or "requires holding mutex" not in probe.stderr:
        print("check_thread_safety: clang did not reject an unguarded access; the "
              "annotations are not active\n" + probe.stderr, file=sys.stderr)
        return 1

    start = time.monotonic()
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for file, rc, err in pool.map(run, entries):
            if rc != 0:
                failed += 1
                print(f"FAIL {os.path.relpath(file, root)}\n{err}", file=sys.stderr)
    print(f"check_thread_safety: {len(entries)} files, {failed} failed, "
          f"{time.monotonic() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
