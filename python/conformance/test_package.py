"""The Python package as a user installs it, offline: ``pip install
./python`` with build isolation (the default) and without, from an sdist
too, leaving nothing in the source tree; what the installed distribution
holds (py.typed, the verifiers taskset module, entry points, one version);
and mypy on the package.

run.py sets CONFORMANCE_SRC (the package directory under test) and runs
this module with the interpreter the other suites use; mypy is Debian's
(/usr/bin/python3 -m mypy, apt-get install python3-mypy).
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest

SRC = os.environ.get("CONFORMANCE_SRC") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ROOT = os.path.abspath(os.path.join(SRC, ".."))
MYPY = os.environ.get("CONFORMANCE_MYPY", "/usr/bin/python3")


def tree(path):
    """Every file and directory under path, relative."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for n in dirnames + filenames:
            out.add(os.path.relpath(os.path.join(dirpath, n), path))
    return out


def pip(*args):
    """python -m pip ARGS, offline; the CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", *args],
                          capture_output=True, text=True, timeout=300)


class PackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def target(self, name):
        return os.path.join(self.tmp.name, name)

    def test_offline_install_leaves_no_debris(self):
        before = tree(SRC)
        for name, extra in (("isolated", ()), ("no-isolation", ("--no-build-isolation",))):
            with self.subTest(name):
                out = pip("--target", self.target(name), *extra, SRC)
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
                self.assertTrue(os.path.isfile(os.path.join(self.target(name), "persuarena", "client.py")))
        self.assertEqual(tree(SRC) - before, set(), "the install left files in the source tree")

    def test_installed_distribution(self):
        site = self.target("dist")
        out = pip("--target", site, SRC)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        with open(os.path.join(ROOT, "internal", "buildinfo", "VERSION"), encoding="utf-8") as f:
            release = f.read().strip()
        info = os.path.join(site, "openenv_persuarena-%s.dist-info" % release)
        self.assertTrue(os.path.isdir(info), sorted(os.listdir(site)))
        for rel in ("persuarena/py.typed", "persuarena/openenv.yaml", "persuarena_verifiers.py",
                    "persuarena/_release.py"):
            self.assertTrue(os.path.isfile(os.path.join(site, rel)), rel)
        eps = configparser.ConfigParser()
        eps.read(os.path.join(info, "entry_points.txt"))
        self.assertEqual(dict(eps["console_scripts"]), {"persuarena": "persuarena.__main__:main"})
        self.assertEqual(dict(eps["verl.plugins"]), {"persuarena": "persuarena.verl"})
        # One version: the distribution's, the module's and Go's release.
        code = ("import importlib.metadata as m, persuarena; "
                "print(m.version('openenv-persuarena'), persuarena.__version__)")
        got = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=site),
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(got.stdout.split(), [release, release], got.stderr)

    def test_sdist_round_trip(self):
        # The sdist the backend writes installs offline on its own.
        sys.path.insert(0, os.path.join(SRC, "build_backend"))
        try:
            import persuarena_build
        finally:
            sys.path.pop(0)
        name = persuarena_build.build_sdist(self.tmp.name)
        with tarfile.open(os.path.join(self.tmp.name, name)) as t:
            t.extractall(self.target("sdist"))
            names = t.getnames()
        base = name[: -len(".tar.gz")]
        self.assertIn(base + "/VERSION", names)
        out = pip("--target", self.target("from-sdist"), os.path.join(self.target("sdist"), base))
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertTrue(os.path.isfile(os.path.join(self.target("from-sdist"), "persuarena", "_release.py")))

    def test_mypy(self):
        # Clean with the package's own configuration (python/pyproject.toml:
        # missing trainer frameworks are ignored), i.e. with
        # --ignore-missing-imports.
        probe = subprocess.run([MYPY, "-m", "mypy", "--version"], capture_output=True, text=True)
        if probe.returncode != 0:
            self.fail("mypy is not installed for %s (apt-get install python3-mypy)" % MYPY)
        out = subprocess.run([MYPY, "-m", "mypy", "--ignore-missing-imports", "--cache-dir", os.devnull,
                              "src/persuarena", "src/persuarena_verifiers.py"],
                             cwd=SRC, capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("Success: no issues found", out.stdout)


if __name__ == "__main__":
    unittest.main()
