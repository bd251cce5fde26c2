"""Import-time placeholders for the heavy dependencies of the upstream
trainers that cannot be installed here (no registry serves them: ray, vLLM,
transformers, accelerate, datasets, hydra, omegaconf, tensordict, ...;
../shared/conformance/README.md).

``install(names, versions)`` puts a ``sys.meta_path`` finder first that
answers every module named in ``names`` (and its submodules) with a
permissive placeholder module: any attribute is a placeholder class that
can be subclassed, instantiated, called, subscripted (``Foo[int]``), used
as a decorator (``@ray.remote`` returns the decorated object unchanged)
and combined in annotations (``Foo | None``). Nothing of the stubbed
packages runs: the upstream module under test imports, and its own
functions run for real. A test that reaches a placeholder where it needs
behaviour fails there (a placeholder is never a value a test asserts on).

``versions`` maps a module to the ``__version__`` string its placeholder
reports, for upstream code that compares versions at import (TRL compares
``transformers.__version__``, parses vLLM's).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Dict, Iterable, Optional


class _StubMeta(type):
    """Metaclass of placeholder classes: class-level attributes and
    subscripts are placeholders too."""

    def __getattr__(cls, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(name)

    def __getitem__(cls, item):
        return cls

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0

    def __bool__(cls):
        return False

    def __add__(cls, other):
        # A placeholder class attribute extended at import, e.g.
        # ``_BaseConfig._VALID_DICT_FIELDS + [...]``: the extension alone.
        return other

    __radd__ = __add__


class Stub(metaclass=_StubMeta):
    """A placeholder instance: attributes are placeholder classes, calling
    one with a single function or class returns it (decorator use)."""

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and (isinstance(args[0], type) or callable(args[0])) \
                and not isinstance(args[0], Stub):
            return args[0]
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(name)

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and (isinstance(args[0], type) or callable(args[0])):
            return args[0]
        return Stub()

    def __getitem__(self, item):
        return Stub()

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False

    def __enter__(self):
        return self

    def __post_init__(self):
        # A placeholder dataclass base (transformers' TrainingArguments
        # under TRL's configs): nothing to initialise.
        pass

    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        # A placeholder used as a pydantic field type accepts anything.
        from pydantic_core import core_schema

        return core_schema.any_schema()

    def __exit__(self, *exc):
        return False


def _stub_class(name: str) -> type:
    return _StubMeta(name, (Stub,), {"__module__": "stubs"})


class StubModule(types.ModuleType):
    """A placeholder module: every missing attribute is a placeholder class."""

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _stub_class(name)
        setattr(self, name, value)
        return value


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers the configured module names with StubModule placeholders."""

    def __init__(self, names: Iterable[str], versions: Optional[Dict[str, str]] = None):
        self.names = tuple(names)
        self.versions = dict(versions or {})

    def covers(self, fullname: str) -> bool:
        return any(fullname == n or fullname.startswith(n + ".") for n in self.names)

    def find_spec(self, fullname, path=None, target=None):
        if not self.covers(fullname):
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        mod = StubModule(spec.name)
        mod.__path__ = []
        mod.__file__ = "<stub %s>" % spec.name
        # Choice: "0.0.0" unless configured, so that upstream version
        # checks parse it and find the package too old for its optional
        # paths (e.g. TRL's liger-kernel check).
        if "." not in spec.name or spec.name in self.versions:
            mod.__version__ = self.versions.get(spec.name, "0.0.0")
        return mod

    def exec_module(self, module):
        parent, _, child = module.__name__.rpartition(".")
        if parent and parent in sys.modules:
            setattr(sys.modules[parent], child, module)


#: The packages no registry here serves (../shared/conformance/README.md).
HEAVY = ("ray", "vllm", "transformers", "accelerate", "datasets", "hydra", "omegaconf", "tensordict",
         "huggingface_hub", "fastmcp", "openai", "liger_kernel")

#: torch 1.13 (Debian) submodules that do not import under Python 3.11.
TORCH_BROKEN = ("torch.distributed.fsdp", "torch.distributed._shard", "torch.distributed.tensor",
                "torch.distributed.checkpoint", "torch.distributed.device_mesh")


def install(names: Iterable[str] = HEAVY + TORCH_BROKEN, versions: Optional[Dict[str, str]] = None) -> StubFinder:
    """Puts a StubFinder for names first on sys.meta_path (before the real
    path finder, so a stubbed torch submodule shadows the broken real one)
    and returns it."""
    finder = StubFinder(names, versions)
    sys.meta_path.insert(0, finder)
    return finder
