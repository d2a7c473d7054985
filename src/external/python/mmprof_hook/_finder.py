"""Lazy patching: a sys.meta_path finder that lets the normal machinery find
``torch.utils.data.dataloader`` (and NVIDIA DALI's ``nvidia.dali.plugin.pytorch``, torchdata's
``torchdata.nodes.loader``) and wraps
that module's exec_module so it is patched right after the module body ran.  Imports nothing
but ``sys``; the finder removes itself once every target fired."""

import sys

TARGET = "torch.utils.data.dataloader"
# module -> the patching function that patches it (DALI's and torchdata's modules import torch
# first, so the DataLoader's patch, which starts the hook, comes before them).
TARGETS = {TARGET: "patch", "nvidia.dali.plugin.pytorch": "patch_dali",
           "torchdata.nodes.loader": "patch_nodes"}


def patch_now(module):
    try:
        from . import patching
        getattr(patching, TARGETS[module.__name__])(module)
    except Exception as exc:
        try:
            from . import records
            records.fail("patch", exc)
        except Exception:
            pass


class _LoaderProxy:
    """Used only if the real loader refuses an instance attribute."""

    def __init__(self, loader, exec_module):
        self._mmprof_loader = loader
        self._mmprof_exec = exec_module

    def create_module(self, spec):
        return self._mmprof_loader.create_module(spec)

    def exec_module(self, module):
        return self._mmprof_exec(module)

    def __getattr__(self, name):
        if name.startswith("_mmprof_"):
            raise AttributeError(name)
        return getattr(self._mmprof_loader, name)


class Finder:
    def __init__(self, targets):
        self._busy = False
        self._left = set(targets)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self._left or self._busy:
            return None
        self._busy = True
        try:
            spec = None
            for finder in list(sys.meta_path):
                if finder is self:
                    continue
                find = getattr(finder, "find_spec", None)
                if find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._busy = False
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return None  # let the import system proceed as if we were not here
        self._wrap(spec, loader)
        return spec

    def _wrap(self, spec, loader):
        orig_exec = loader.exec_module
        finder = self

        def exec_module(module):
            try:
                del loader.exec_module
            except (AttributeError, TypeError):
                pass
            finder._left.discard(spec.name)
            if not finder._left:
                try:
                    sys.meta_path.remove(finder)
                except ValueError:
                    pass
            orig_exec(module)
            patch_now(module)

        try:
            loader.exec_module = exec_module
        except (AttributeError, TypeError):
            spec.loader = _LoaderProxy(loader, exec_module)
