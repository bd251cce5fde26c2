"""Runs the trainer-adapter conformance suites against the real upstream
code in ../shared/conformance/upstream (its README names each folder's
upstream and commit) and prints a pass table and the time taken.

  python3 python/conformance/run.py [--src python] [--only NAME,...]

Steps:
1. installs the package under test (--src, default python/) offline into a
   temporary target: ``pip install --no-index --no-deps --target DIR SRC``,
   build isolation on, as a user's ``pip install ./python`` would; the
   suites import persuarena from there (its entry points included);
2. links the Debian packages this interpreter lacks (torch 1.13, numpy,
   httpx, ...; apt-get install python3-torch python3-httpx ...) into a
   folder on PYTHONPATH;
3. builds the persuarena binary (go build ./cmd/persuarena) unless
   PERSUARENA_BIN names one;
4. runs each suite in its own process with the upstream folder on
   PYTHONPATH (test_verl.py three times, test_trl.py twice).

A suite that fails, errors, skips a test or runs none fails the run (exit
status 1). The interpreter must have pydantic 2 (the image's python3 does;
Debian 12's python3-pydantic is 1.10, too old for OpenEnv and verifiers).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DEBIAN = "/usr/lib/python3/dist-packages"

# Debian packages linked in when this interpreter cannot import them
# (module name, Debian package): torch for verl's estimator path and TRL,
# httpx & co. for OpenEnv's clients and verifiers, aiohttp & co. for
# verifiers' interception server, packaging for TRL's version checks.
DEBIAN_MODULES = [("torch", "python3-torch"), ("torchgen", "python3-torch"), ("numpy", "python3-numpy"),
                  ("packaging", "python3-packaging"), ("httpx", "python3-httpx"), ("httpcore", "python3-httpcore"),
                  ("h11", "python3-h11"), ("anyio", "python3-anyio"), ("sniffio", "python3-sniffio"),
                  ("rfc3986", "python3-rfc3986"), ("rich", "python3-rich"), ("markdown_it", "python3-markdown-it"),
                  ("mdurl", "python3-mdurl"), ("click", "python3-click"), ("yaml", "python3-yaml"),
                  ("aiohttp", "python3-aiohttp"), ("multidict", "python3-multidict"), ("yarl", "python3-yarl"),
                  ("frozenlist", "python3-frozenlist"), ("aiosignal", "python3-aiosignal"),
                  ("async_timeout", "python3-async-timeout")]

# folder -> (upstream, version), as ../shared/conformance/README.md gives them.
UPSTREAMS = {
    "openenv-385de5e": ("huggingface/OpenEnv", "main 385de5eb"),
    "verl-v0.8.0": ("verl-project/verl", "tag v0.8.0"),
    "verl-v0.9.0": ("verl-project/verl", "tag v0.9.0 = 483b8a0"),
    "verl-main-1dda039": ("verl-project/verl", "main 1dda039b (0.10.0.dev)"),
    "trl-v1.9.0": ("huggingface/trl", "tag v1.9.0"),
    "trl-f2cd577": ("huggingface/trl", "main f2cd5771 (1.10.0.dev0)"),
    "verifiers-a60a606": ("PrimeIntellect-ai/verifiers", "main a60a606e"),
}

# (suite name, test module, folders put on PYTHONPATH, relative to the upstream dir)
SUITES = [
    ("package", "test_package", []),
    ("openenv-385de5e", "test_openenv", ["openenv-385de5e/src", "pydeps/fastapi", "pydeps/starlette", "pydeps/typer",
                                         "pydeps/websockets/src"]),
    ("verl-v0.8.0", "test_verl", ["verl-v0.8.0"]),
    ("verl-v0.9.0", "test_verl", ["verl-v0.9.0"]),
    ("verl-main-1dda039", "test_verl", ["verl-main-1dda039"]),
    ("trl-v1.9.0", "test_trl", ["trl-v1.9.0"]),
    ("trl-f2cd577", "test_trl", ["trl-f2cd577", "openenv-385de5e/src"]),
    ("verifiers-a60a606", "test_verifiers", ["verifiers-a60a606", "pydeps/fastapi", "pydeps/starlette",
                                             "pydeps/typer"]),
]


def link_debian(dest: str) -> None:
    """Symlinks into dest each Debian module (and its metadata folder) that
    this interpreter cannot import. Raises SystemExit naming the apt
    package when one is missing."""
    import importlib.util

    os.makedirs(dest, exist_ok=True)
    names = os.listdir(DEBIAN) if os.path.isdir(DEBIAN) else []
    for mod, pkg in DEBIAN_MODULES:
        if importlib.util.find_spec(mod) is not None:
            continue
        if mod not in names:
            raise SystemExit("run.py: %s is missing: apt-get install %s" % (mod, pkg))
        os.symlink(os.path.join(DEBIAN, mod), os.path.join(dest, mod))
        for n in names:
            if re.match(r"^%s[-_][0-9].*\.(dist|egg)-info$" % re.escape(mod), n, re.I) or \
                    (mod == "markdown_it" and n.startswith("markdown_it_py-")):
                os.symlink(os.path.join(DEBIAN, n), os.path.join(dest, n))


def install(src: str, dest: str) -> str:
    """pip install --no-index --no-deps --target dest src; returns "" or the
    error output."""
    out = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", dest,
                          src], capture_output=True, text=True)
    return "" if out.returncode == 0 else out.stdout + out.stderr


def parse(output: str):
    """(ran, passed, failed) from unittest's verbose output: the tests run,
    those reported "ok", and whether anything failed, errored or was
    skipped (a subtest's failure fails its test)."""
    ran = re.findall(r"^Ran (\d+) tests? in", output, re.M)
    ran = int(ran[-1]) if ran else 0
    passed = len(re.findall(r"^test\w* \([\w.]+\) \.\.\. ok$", output, re.M))
    bad = bool(re.search(r"^(FAIL|ERROR): |^FAILED |skipped|expected failure", output, re.M))
    return ran, passed, bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default=os.path.join(ROOT, "python"), help="the package directory to install and test")
    ap.add_argument("--only", default="", help="comma-separated suite names (default: all)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every suite's output")
    args = ap.parse_args()
    start = time.monotonic()
    upstream = os.environ.get("PERSUARENA_CONFORMANCE_UPSTREAM") or os.path.join(ROOT, "..", "shared", "conformance",
                                                                                   "upstream")
    upstream = os.path.abspath(upstream)
    if not os.path.isdir(upstream):
        print("run.py: no upstream folder %s (set PERSUARENA_CONFORMANCE_UPSTREAM)" % upstream, file=sys.stderr)
        return 1
    import pydantic

    if not pydantic.VERSION.startswith("2."):
        print("run.py: %s has pydantic %s; OpenEnv and verifiers need pydantic 2" % (sys.executable, pydantic.VERSION),
              file=sys.stderr)
        return 1
    only = {s for s in args.only.split(",") if s}
    tmp = tempfile.mkdtemp(prefix="persuarena-conformance-")
    try:
        links, site = os.path.join(tmp, "debian"), os.path.join(tmp, "site")
        link_debian(links)
        binary = os.environ.get("PERSUARENA_BIN", "")
        if not binary:
            binary = os.path.join(tmp, "persuarena")
            subprocess.run(["go", "build", "-o", binary, "./cmd/persuarena"], cwd=ROOT, check=True)
        if install_error := install(args.src, site):
            print("run.py: pip install --no-index %s failed; the suites import it from its src/:\n%s"
                  % (args.src, install_error), file=sys.stderr)
        pkg_path = site
        if install_error:
            # Keep testing the adapters from the source tree; the package
            # suite reports the failed install.
            pkg_path = os.path.join(args.src, "src")
        rows, failed = [], False
        for name, module, folders in SUITES:
            if only and name not in only:
                continue
            t0 = time.monotonic()
            path = [links] + [os.path.join(upstream, f) for f in folders] + [pkg_path, HERE]
            if name.startswith("verifiers"):
                path.append(os.path.join(HERE, "standins"))
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), CONFORMANCE_UPSTREAM=name,
                       PERSUARENA_BIN=binary, PYTHONDONTWRITEBYTECODE="1",
                       CONFORMANCE_SRC=os.path.abspath(args.src), CONFORMANCE_UPSTREAM_DIR=upstream)
            proc = subprocess.run([sys.executable, "-m", "unittest", "-v", module], cwd=HERE, env=env,
                                  capture_output=True, text=True)
            output = proc.stdout + proc.stderr
            ran, passed, bad = parse(output)
            ok = proc.returncode == 0 and ran > 0 and passed == ran and not bad
            failed = failed or not ok
            rows.append((name, passed, ran, time.monotonic() - t0, ok))
            if args.verbose or not ok:
                print("==== %s (%s)\n%s" % (name, module, output))
        print("\n%-20s %-30s %-32s %8s %6s" % ("suite", "upstream", "version", "passed", "time"))
        for name, passed, ran, dt, ok in rows:
            up, ver = UPSTREAMS.get(name, ("(this package)", "-"))
            print("%-20s %-30s %-32s %8s %5.0fs%s" % (name, up, ver, "%d/%d" % (passed, ran), dt, "" if ok else "  FAILED"))
        print("conformance: %s in %.0f s" % ("FAILED" if failed else "ok", time.monotonic() - start))
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
