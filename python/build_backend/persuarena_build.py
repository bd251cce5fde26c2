"""The package's PEP 517 build backend, standard library only.

``pip install ./python`` builds a wheel through this module with nothing
to fetch (pyproject.toml: ``requires = []``, ``backend-path``), so it
works offline with or without build isolation, and writes nothing into
the source tree (no build/ or *.egg-info): it reads src/ and writes the
wheel (or sdist) straight into the directory pip gives it.

This module is the one home of the distribution's metadata (below); the
version is the Go module's release, internal/buildinfo/VERSION (VERSION
in an sdist), written into the wheel as persuarena/_release.py.

Environment (scripts/build-wheels sets both): PERSUARENA_BINARY, a built
``persuarena`` binary, is copied to persuarena/bin/persuarena and makes
the wheel a platform wheel tagged py3-none-PERSUARENA_WHEEL_PLAT (e.g.
manylinux_2_17_x86_64.manylinux2014_x86_64); without it the wheel is pure
(py3-none-any) and finds the binary in PERSUARENA_BIN or on PATH.

Hooks: build_wheel, build_sdist, build_editable (PEP 660: a .pth file
naming src/), their get_requires_* (none) and
prepare_metadata_for_build_wheel. Errors: RuntimeError for a missing
VERSION, a PERSUARENA_BINARY that is not a file, or PERSUARENA_BINARY
without PERSUARENA_WHEEL_PLAT.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import stat
import tarfile
import time
import zipfile
from typing import Dict, Iterator, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)  # python/
SRC = os.path.join(ROOT, "src")

# "openenv-" + the import name: OpenEnv's AutoEnv finds installed
# openenv-* distributions and reads their module's openenv.yaml
# (huggingface/OpenEnv 385de5e, src/openenv/auto/_discovery.py:345-375).
NAME = "openenv-persuarena"
SUMMARY = ("PersuArena from Python: an OpenEnv-style client and environment adapters for the persuasion environment "
           "server, with the server inside")
REQUIRES_PYTHON = ">=3.9"
LICENSE = "Apache-2.0"
CLASSIFIERS = [
    "License :: OSI Approved :: Apache Software License",
    "Operating System :: POSIX :: Linux",
    "Programming Language :: Python :: 3",
    "Topic :: Scientific/Engineering :: Artificial Intelligence",
]
URLS = {"Documentation": "https://github.com/persuarena/persuarena/blob/main/docs/server.md"}
# Entry points: the console script (the bundled Go binary), and the verl
# plugin verl >= 0.9 imports at its own import (verl/__init__.py:44-66 at
# v0.9.0), which registers the agent loop and the probe_rpo estimator.
ENTRY_POINTS = {
    "console_scripts": {"persuarena": "persuarena.__main__:main"},
    "verl.plugins": {"persuarena": "persuarena.verl"},
}
# Top-level importables: the package, and the verifiers taskset module
# (verifiers v1 resolves a taskset id as one top-level module name,
# verifiers/v1/utils/loaders.py:70-78 at a60a606).
PACKAGES = ["persuarena"]
MODULES = ["persuarena_verifiers"]

# Zip entry time: SOURCE_DATE_EPOCH when set (reproducible builds), else
# the zip format's earliest date.
_EPOCH = (1980, 1, 1, 0, 0, 0)


def _version() -> str:
    for path in (os.path.join(ROOT, "..", "internal", "buildinfo", "VERSION"), os.path.join(ROOT, "VERSION")):
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return f.read().strip()
    raise RuntimeError("persuarena_build: no internal/buildinfo/VERSION (or VERSION in an sdist): "
                       "build from a PersuArena checkout")


def _dist() -> str:
    return NAME.replace("-", "_")


def _metadata(version: str) -> str:
    lines = ["Metadata-Version: 2.1", "Name: " + NAME, "Version: " + version, "Summary: " + SUMMARY,
             "License: " + LICENSE, "Requires-Python: " + REQUIRES_PYTHON]
    lines += ["Classifier: " + c for c in CLASSIFIERS]
    lines += ["Project-URL: %s, %s" % kv for kv in URLS.items()]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return "\n".join(lines) + "\n\n" + readme


def _entry_points() -> str:
    out = []
    for group, eps in ENTRY_POINTS.items():
        out.append("[%s]" % group)
        out += ["%s = %s" % kv for kv in eps.items()]
        out.append("")
    return "\n".join(out)


def _binary() -> Tuple[str, str]:
    binary = os.environ.get("PERSUARENA_BINARY", "")
    plat = os.environ.get("PERSUARENA_WHEEL_PLAT", "")
    if binary and not os.path.isfile(binary):
        raise RuntimeError("persuarena_build: PERSUARENA_BINARY %r is not a file" % binary)
    if binary and not plat:
        raise RuntimeError("persuarena_build: PERSUARENA_BINARY needs PERSUARENA_WHEEL_PLAT (the wheel's platform tag)")
    return binary, plat if binary else "any"


def _sources() -> Iterator[Tuple[str, str]]:
    """(path in the wheel, file on disk) of the importable files under src/,
    without caches."""
    for pkg in PACKAGES:
        for dirpath, dirnames, filenames in os.walk(os.path.join(SRC, pkg)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and d != "bin")
            for fn in sorted(filenames):
                if fn.endswith((".pyc", ".pyo")) or fn == "_release.py":
                    continue
                full = os.path.join(dirpath, fn)
                yield os.path.relpath(full, SRC).replace(os.sep, "/"), full
    for mod in MODULES:
        yield mod + ".py", os.path.join(SRC, mod + ".py")


class _Wheel:
    """Writes a wheel: files, then dist-info with RECORD last."""

    def __init__(self, path: str):
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.record: List[str] = []
        epoch = os.environ.get("SOURCE_DATE_EPOCH")
        self.date = time.gmtime(max(int(epoch), 315532800))[:6] if epoch else _EPOCH

    def add(self, name: str, data: bytes, mode: int = 0o644) -> None:
        info = zipfile.ZipInfo(name, date_time=self.date)
        info.external_attr = (stat.S_IFREG | mode) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.record.append("%s,sha256=%s,%d" % (name, digest, len(data)))

    def close(self, record_name: str) -> None:
        self.record.append(record_name + ",,")
        info = zipfile.ZipInfo(record_name, date_time=self.date)
        info.external_attr = (stat.S_IFREG | 0o644) << 16
        self.zip.writestr(info, "\n".join(self.record) + "\n", compress_type=zipfile.ZIP_DEFLATED)
        self.zip.close()


def _tags(plat: str) -> List[str]:
    return ["py3-none-" + p for p in plat.split(".")]


def _dist_info(whl: _Wheel, version: str, plat: str, pure: bool) -> str:
    di = "%s-%s.dist-info" % (_dist(), version)
    whl.add(di + "/METADATA", _metadata(version).encode())
    wheel = ["Wheel-Version: 1.0", "Generator: persuarena_build", "Root-Is-Purelib: %s" % ("true" if pure else "false")]
    wheel += ["Tag: " + t for t in _tags(plat)]
    whl.add(di + "/WHEEL", ("\n".join(wheel) + "\n").encode())
    whl.add(di + "/entry_points.txt", _entry_points().encode())
    whl.add(di + "/top_level.txt", ("\n".join(PACKAGES + MODULES) + "\n").encode())
    return di


def _release_py(version: str) -> bytes:
    return ('"""Written by the build backend from internal/buildinfo/VERSION."""\n\nRELEASE = %r\n' % version).encode()


def build_wheel(wheel_directory: str, config_settings: Optional[Dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    """Builds the wheel into wheel_directory; returns its file name."""
    version = _version()
    binary, plat = _binary()
    name = "%s-%s-py3-none-%s.whl" % (_dist(), version, plat)
    whl = _Wheel(os.path.join(wheel_directory, name))
    for arc, path in _sources():
        with open(path, "rb") as f:
            whl.add(arc, f.read())
    whl.add("persuarena/_release.py", _release_py(version))
    if binary:
        with open(binary, "rb") as f:
            whl.add("persuarena/bin/persuarena", f.read(), 0o755)
    di = _dist_info(whl, version, plat, pure=not binary)
    whl.close(di + "/RECORD")
    return name


def build_editable(wheel_directory: str, config_settings: Optional[Dict] = None,
                   metadata_directory: Optional[str] = None) -> str:
    """PEP 660: a wheel whose .pth file puts src/ on sys.path."""
    version = _version()
    name = "%s-%s-py3-none-any.whl" % (_dist(), version)
    whl = _Wheel(os.path.join(wheel_directory, name))
    whl.add("__editable__.%s.pth" % _dist(), (SRC + "\n").encode())
    di = _dist_info(whl, version, "any", pure=True)
    whl.close(di + "/RECORD")
    return name


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Dict] = None) -> str:
    """Writes the dist-info directory the wheel will carry; returns its name."""
    version = _version()
    di = "%s-%s.dist-info" % (_dist(), version)
    os.makedirs(os.path.join(metadata_directory, di), exist_ok=True)
    for fn, text in (("METADATA", _metadata(version)), ("entry_points.txt", _entry_points()),
                     ("top_level.txt", "\n".join(PACKAGES + MODULES) + "\n")):
        with open(os.path.join(metadata_directory, di, fn), "w", encoding="utf-8") as f:
            f.write(text)
    return di


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_sdist(sdist_directory: str, config_settings: Optional[Dict] = None) -> str:
    """Builds NAME-VERSION.tar.gz: pyproject.toml, README.md, this backend,
    src/ and VERSION, with PKG-INFO; returns its file name."""
    version = _version()
    base = "%s-%s" % (_dist(), version)
    name = base + ".tar.gz"
    files = [("pyproject.toml", os.path.join(ROOT, "pyproject.toml")), ("README.md", os.path.join(ROOT, "README.md")),
             ("build_backend/persuarena_build.py", __file__)]
    files += [("src/" + arc, path) for arc, path in _sources()]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        def add(arc: str, data: bytes) -> None:
            info = tarfile.TarInfo(base + "/" + arc)
            info.size, info.mode, info.mtime = len(data), 0o644, 315532800
            tar.addfile(info, io.BytesIO(data))

        for arc, path in files:
            with open(path, "rb") as f:
                add(arc, f.read())
        add("VERSION", (version + "\n").encode())
        add("PKG-INFO", _metadata(version).encode())
    return name


def get_requires_for_build_wheel(config_settings: Optional[Dict] = None) -> List[str]:
    """Nothing: the standard library builds the wheel."""
    return []


get_requires_for_build_sdist = get_requires_for_build_wheel
get_requires_for_build_editable = get_requires_for_build_wheel
