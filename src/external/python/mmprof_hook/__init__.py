"""mmprof's zero-code PyTorch DataLoader hook.

``install()`` is all that runs at interpreter start (from mmprof's
sitecustomize.py): when MMPROF_HOOK_DIR is set it puts a finder in front of
sys.meta_path that waits for ``torch.utils.data.dataloader``; nothing else is
imported until torch itself imports that module.  The protocol is described
in docs/external-hook.md.
"""

import sys

from . import config

__all__ = ["install"]

_installed = False


def install():
    """Activate the hook in this process if MMPROF_HOOK_DIR is set.

    Returns True when the hook is (now) installed.  Never raises for anything
    but programming errors; sitecustomize.py swallows even those."""
    global _installed
    if _installed:
        return True
    if config.hook_dir() is None:
        return False
    from . import _finder
    _installed = True
    left = []
    for name in _finder.TARGETS:  # torch's first: it starts the hook
        mod = sys.modules.get(name)
        if mod is not None:
            # imported before us (install() called by hand): patch now.
            _finder.patch_now(mod)
        else:
            left.append(name)
    if left:
        sys.meta_path.insert(0, _finder.Finder(left))
    return True
