"""Build hooks the declarative pyproject.toml cannot express:

- the version, from the Go module's release file internal/buildinfo/VERSION
  (its one home), written into the wheel as persuarena/_release.py;
- the bundled server: when PERSUARENA_BINARY names a built `persuarena`
  binary, it is copied to persuarena/bin/persuarena and the wheel is a
  platform wheel tagged py3-none-PERSUARENA_WHEEL_PLAT (e.g.
  manylinux_2_17_x86_64.manylinux2014_x86_64); without it the wheel is pure
  (py3-none-any) and finds the binary on PATH or in PERSUARENA_BIN.

scripts/build-wheels sets both variables for each target.
"""

import os
import shutil

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70: the wheel package's command
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY = os.environ.get("PERSUARENA_BINARY", "")
PLAT = os.environ.get("PERSUARENA_WHEEL_PLAT", "")


def release():
    for path in (os.path.join(HERE, "..", "internal", "buildinfo", "VERSION"), os.path.join(HERE, "VERSION")):
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return f.read().strip()
    raise SystemExit("setup.py: no internal/buildinfo/VERSION: build from a PersuArena checkout")


class BuildPy(build_py):
    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "persuarena")
        with open(os.path.join(pkg, "_release.py"), "w", encoding="utf-8") as f:
            f.write('"""Written by setup.py from internal/buildinfo/VERSION."""\n\nRELEASE = %r\n' % release())
        if BINARY:
            if not os.path.isfile(BINARY):
                raise SystemExit("setup.py: PERSUARENA_BINARY %r is not a file" % BINARY)
            os.makedirs(os.path.join(pkg, "bin"), exist_ok=True)
            dst = os.path.join(pkg, "bin", "persuarena")
            shutil.copyfile(BINARY, dst)
            os.chmod(dst, 0o755)


class BinaryDistribution(Distribution):
    # A bundled binary makes the wheel platform-specific: its files then
    # install at the platlib root (Root-Is-Purelib: false).
    def has_ext_modules(self):
        return bool(BINARY)


class BdistWheel(bdist_wheel):

    def get_tag(self):
        if BINARY:
            if not PLAT:
                raise SystemExit("setup.py: PERSUARENA_BINARY needs PERSUARENA_WHEEL_PLAT (the wheel's platform tag)")
            return "py3", "none", PLAT
        return super().get_tag()


setup(version=release(), distclass=BinaryDistribution, cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel})
