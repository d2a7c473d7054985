"""sitecustomize.py: activation, laziness, chaining, jobs without torch."""

import json
import os
import shutil
import subprocess
import sys
import unittest

from hooktest import HOOK_PATH, JobCase, clean_env, loader_spec, needs_torch, torch_python

PROBE = r'''
import json, os, sys
sc = sys.modules.get("sitecustomize")
out = {"hook_loaded": "mmprof_hook" in sys.modules,
       "torch_loaded": any(m == "torch" or m.startswith("torch.") for m in sys.modules),
       "sitecustomize": getattr(sc, "__file__", None),
       "chained": os.environ.get("CHAINED_SITE"),
       "mark": getattr(sc, "MARK", None),
       "finders": [type(f).__module__ for f in sys.meta_path]}
print(json.dumps(out))
'''


def probe(run):
    return json.loads(run.stdout.strip().splitlines()[-1])


def python_without_torch():
    """Some interpreter on this machine that cannot import torch, if any."""
    cands = [shutil.which("python3"), os.path.expanduser("~/.pyenv/shims/python3"),
             "/usr/local/bin/python3", sys.executable]
    for c in cands:
        if not c or not os.path.exists(c):
            continue
        try:
            r = subprocess.run([c, "-c", "import torch"], capture_output=True, timeout=60, env=clean_env())
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode != 0:
            return c
    return None


class SiteTests(JobCase):
    PY = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.PY = torch_python() or sys.executable
        cls.chain = os.path.join(cls.tmp, "chain")
        os.makedirs(cls.chain)
        with open(os.path.join(cls.chain, "sitecustomize.py"), "w") as f:
            f.write("import os\nos.environ['CHAINED_SITE'] = '1'\nMARK = 'chained'\n")
        cls.broken = os.path.join(cls.tmp, "broken")
        os.makedirs(cls.broken)
        with open(os.path.join(cls.broken, "sitecustomize.py"), "w") as f:
            f.write("raise RuntimeError('boom from the chained sitecustomize')\n")

    def test_without_hook_dir_nothing_is_loaded(self):
        run = self.run_script("nodir", PROBE, hook=False, pythonpath=[HOOK_PATH], python=self.PY)
        self.assertOk(run)
        p = probe(run)
        self.assertFalse(p["hook_loaded"])
        self.assertFalse(p["torch_loaded"])
        self.assertNotIn("mmprof_hook._finder", p["finders"])

    def test_hook_dir_without_torch_import_is_lazy(self):
        run = self.run_script("lazy", PROBE, python=self.PY)
        self.assertOk(run)
        p = probe(run)
        self.assertTrue(p["hook_loaded"])
        self.assertFalse(p["torch_loaded"])
        self.assertEqual(p["finders"][0], "mmprof_hook._finder")
        self.assertFalse(os.path.exists(run.hook_dir))   # no record, no file, no dir

    def test_chains_to_next_sitecustomize(self):
        for hook in (True, False):
            with self.subTest(hook=hook):
                run = self.run_script("chain-%s" % hook, PROBE, hook=hook,
                                      pythonpath=[HOOK_PATH, self.chain], python=self.PY)
                self.assertOk(run)
                p = probe(run)
                self.assertEqual(p["chained"], "1")
                self.assertEqual(p["mark"], "chained")
                self.assertEqual(p["sitecustomize"], os.path.join(self.chain, "sitecustomize.py"))
                self.assertEqual(p["hook_loaded"], hook)

    def test_chains_to_the_system_sitecustomize(self):
        # Whatever the interpreter runs without mmprof (Debian's apport hook
        # in /usr/lib/python3.11/sitecustomize.py, or nothing) still runs.
        plain = self.run_script("sys-plain", PROBE, hook=False, python=self.PY)
        shim = self.run_script("sys-shim", PROBE, hook=True, python=self.PY)
        self.assertOk(plain)
        self.assertOk(shim)
        self.assertEqual(probe(shim)["sitecustomize"], probe(plain)["sitecustomize"])

    def test_failing_chained_sitecustomize_reports_as_before(self):
        plain = self.run_script("broken-plain", PROBE, hook=False, pythonpath=[self.broken], python=self.PY)
        shim = self.run_script("broken-shim", PROBE, hook=True, pythonpath=[HOOK_PATH, self.broken],
                               python=self.PY)
        self.assertOk(plain)
        self.assertOk(shim)
        self.assertIn("Error in sitecustomize", plain.stderr)
        self.assertEqual(shim.stderr, plain.stderr)
        self.assertTrue(probe(shim)["hook_loaded"])
        self.assertIsNone(probe(shim)["sitecustomize"])

    @needs_torch
    def test_torch_job_without_hook_dir_writes_nothing(self):
        cfg = {"loaders": [loader_spec(n=8, sleep=0, batch_size=4, num_workers=2)], "plan": [[0, 1, None]]}
        run = self.run_job("torch-nodir", cfg, hook=False, pythonpath=[HOOK_PATH])
        self.assertOk(run)
        self.assertFalse(run.job("start")[0]["hook_loaded"])
        self.assertEqual(len(run.job("batch")), 2)
        self.assertFalse(os.path.exists(run.hook_dir))

    def test_job_without_torch_runs_unchanged(self):
        fake = os.path.join(self.tmp, "faketorch")
        os.makedirs(os.path.join(fake, "torch"))
        with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
            f.write("raise ImportError('torch is not installed here')\n")
        cfg = {"loaders": [], "plan": []}
        plain = self.run_job("notorch-plain", cfg, hook=False, pythonpath=[fake], python=self.PY)
        shim = self.run_job("notorch-shim", cfg, hook=True, pythonpath=[HOOK_PATH, fake], python=self.PY)
        self.assertOk(plain)
        self.assertOk(shim)
        self.assertIn("no torch", plain.stdout)
        self.assertEqual((shim.stdout, shim.stderr), (plain.stdout, plain.stderr))
        self.assertFalse(os.path.exists(shim.hook_dir))

    def test_interpreter_without_torch_runs_unchanged(self):
        py = python_without_torch()
        if py is None:
            self.skipTest("no interpreter without torch on this machine")
        cfg = {"loaders": [], "plan": []}
        plain = self.run_job("otherpy-plain", cfg, hook=False, python=py)
        shim = self.run_job("otherpy-shim", cfg, hook=True, python=py)
        self.assertOk(plain)
        self.assertOk(shim)
        self.assertEqual((shim.stdout, shim.stderr), (plain.stdout, plain.stderr))
        self.assertFalse(os.path.exists(shim.hook_dir))


if __name__ == "__main__":
    unittest.main()
