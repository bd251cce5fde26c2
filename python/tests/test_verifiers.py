"""persuarena.verifiers without verifiers installed: the module imports
with the standard library only, and the top-level taskset module
re-exports it. python/conformance/test_verifiers.py runs the environment
in the real verifiers v1 (loader, load_environment, a full rollout)."""

from __future__ import annotations

import importlib
import sys
import unittest


class LazyImportTest(unittest.TestCase):
    def test_import_needs_no_verifiers(self):
        # The module imports with the standard library only; verifiers is
        # needed only when a class is touched.
        saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k == "verifiers" or k.startswith("verifiers.")}
        sys.modules.pop("persuarena.verifiers", None)
        try:
            m = importlib.import_module("persuarena.verifiers")
            self.assertEqual(m.utterance("<think>plan</think> Hello there. "), "Hello there.")
            self.assertNotIn("verifiers.v1", sys.modules)
        finally:
            sys.modules.update(saved)


class TopLevelModuleTest(unittest.TestCase):
    def test_reexports(self):
        # persuarena_verifiers, the taskset id verifiers' loader resolves,
        # re-exports the module's names without importing verifiers.
        import persuarena_verifiers as top

        pv = importlib.import_module("persuarena.verifiers")
        self.assertEqual(pv.TASKSET_ID, top.__name__)
        self.assertIs(top.load_environment, pv.load_environment)
        self.assertEqual(top.__all__, ["PersuArenaTaskset", "PersuArenaVerifiersEnv", "load_environment"])


if __name__ == "__main__":
    unittest.main()
