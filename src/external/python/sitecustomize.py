"""mmprof's sitecustomize: put on PYTHONPATH by mmprof to hook DataLoaders.

1. When MMPROF_HOOK_DIR is set, import ``mmprof_hook`` from this directory
   and install it (lazy: nothing torch-related is imported here).  Any error
   is swallowed: the job must run exactly as without mmprof.
2. Always chain to the sitecustomize this file shadows (the next one on
   sys.path, e.g. Debian's /usr/lib/python3.11/sitecustomize.py): it runs as
   it would have, under its own name, and ends up as sys.modules["sitecustomize"].
"""


def _mmprof_install(here):
    import os
    import sys
    if not os.environ.get("MMPROF_HOOK_DIR"):
        return
    try:
        mod = sys.modules.get("mmprof_hook")
        if mod is None:
            import importlib.machinery
            import importlib.util
            spec = importlib.machinery.PathFinder.find_spec("mmprof_hook", [here])
            if spec is None:
                return
            mod = importlib.util.module_from_spec(spec)
            sys.modules["mmprof_hook"] = mod
            try:
                spec.loader.exec_module(mod)
            except BaseException:
                sys.modules.pop("mmprof_hook", None)
                raise
        mod.install()
    except Exception:
        pass


def _mmprof_chain(here):
    import os
    import sys
    import importlib.machinery

    def real(p):
        try:
            return os.path.realpath(p or os.curdir)
        except Exception:
            return p

    paths = [p for p in sys.path if isinstance(p, str) and real(p) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", paths)
    if spec is None or spec.loader is None:
        return
    import importlib.util
    mod = importlib.util.module_from_spec(spec)
    # As a plain import would: the module is in sys.modules while it runs.
    # An exception propagates to site.py, which reports it the way it
    # reports a failing sitecustomize (and the entry is removed).
    sys.modules["sitecustomize"] = mod
    spec.loader.exec_module(mod)


def _mmprof_main():
    import os
    here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
    _mmprof_install(here)
    _mmprof_chain(here)


_mmprof_main()
