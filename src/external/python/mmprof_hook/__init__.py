"""mmprof's zero-code PyTorch DataLoader hook.

``install()`` is all that runs at interpreter start (from mmprof's
sitecustomize.py): when MMPROF_HOOK_DIR is set it puts a finder in front of
sys.meta_path that waits for ``torch.utils.data.dataloader``, and wraps
sys.excepthook to record the job's uncaught exception; nothing else is
imported until torch itself imports that module (or the job raises).  The protocol is described
in docs/external-hook.md.
"""

import sys

from . import config

__all__ = ["install"]

_installed = False
_job_excepthook = None


def _excepthook(kind, exc, tb):
    """The job's uncaught exception: recorded (records.exception), then shown as before."""
    try:
        from . import records
        records.exception(exc)
    except Exception:
        pass
    _job_excepthook(kind, exc, tb)


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
    global _job_excepthook
    _installed = True
    _job_excepthook = sys.excepthook
    sys.excepthook = _excepthook
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
