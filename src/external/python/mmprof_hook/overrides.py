"""MMPROF_HOOK_OVERRIDES: force DataLoader constructor arguments.

The caller's positional and keyword arguments are bound to the signature of
the installed torch's DataLoader.__init__, the overrides replace (or add)
named arguments, and torch's own __init__ runs with the result.  The rules
(docs/external-hook.md, "Overrides"):

1. A key that is not a parameter of this torch's DataLoader.__init__ (for
   example ``in_order`` before torch 2.6) is rejected and never passed.
   ``self`` and ``dataset`` are not overridable.
2. torch alone decides whether a combination is valid: the hook never copies
   its checks.  Candidates are tried first on a scratch DataLoader object
   (with warnings silenced), and the real object is constructed exactly once,
   with the chosen arguments:
   a. all accepted overrides, if torch accepts them;
   b. otherwise, if torch refuses the caller's own arguments too, the real
      object is constructed with the caller's arguments, so the job fails with
      exactly the exception it would have raised without the hook;
   c. otherwise overrides are added one at a time in the order given, each
      kept if torch accepts it together with those kept before; a refused one
      is reported with torch's message.
"""

import inspect
import warnings

NOT_OVERRIDABLE = ("self", "dataset")


class Outcome:
    __slots__ = ("applied", "rejected", "original")

    def __init__(self):
        self.applied = {}
        self.rejected = {}
        self.original = {}


def _signature(fn):
    # follow_wrapped: the hook's own wrapper carries __wrapped__.
    return inspect.signature(inspect.unwrap(fn))


def _message(exc):
    return "%s: %s" % (type(exc).__name__, exc)


class Plan:
    """What to construct the real object with: ``args``/``kwargs`` (self
    first) or None for the caller's own arguments; ``outcome`` to report."""

    __slots__ = ("args", "kwargs", "outcome", "keys")

    def __init__(self, outcome):
        self.args = None
        self.kwargs = None
        self.outcome = outcome
        self.keys = []

    def refused_on_real_object(self, exc):
        """The real construction refused what the trials accepted."""
        for k in self.keys:
            self.outcome.applied.pop(k, None)
            self.outcome.rejected[k] = "refused by torch on the real object: %s" % _message(exc)
        self.keys = []


def plan(orig_init, base_cls, self, args, kwargs, overrides, torch_version, json_value):
    """Decide, by trials on scratch objects only, how the real DataLoader is
    constructed.  Never calls orig_init on ``self``; torch's exceptions in
    trials are caught and reported, never raised."""
    out = Outcome()
    result = Plan(out)
    sig = _signature(orig_init)
    params = sig.parameters
    try:
        bound = sig.bind(self, *args, **kwargs)
    except TypeError:
        # The caller's arguments do not fit: torch raises its own TypeError.
        for k in overrides:
            out.rejected[k] = "not applied: the caller's arguments do not fit DataLoader.__init__"
        return result

    accepted = {}
    for k, v in overrides.items():
        p = params.get(k)
        if k in NOT_OVERRIDABLE:
            out.rejected[k] = "not overridable"
        elif p is None or p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            out.rejected[k] = "not a parameter of DataLoader.__init__ in torch %s" % torch_version
        else:
            accepted[k] = v
    if not accepted:
        return result

    for k in accepted:
        out.original[k] = json_value(bound.arguments[k] if k in bound.arguments else params[k].default)

    def call_args(target, keys):
        b = sig.bind(target, *args, **kwargs)
        for k in keys:
            b.arguments[k] = accepted[k]
        return b.args, b.kwargs

    def trial(keys):
        scratch = object.__new__(base_cls)
        a, kw = call_args(scratch, keys)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                orig_init(*a, **kw)
        except Exception as exc:
            return exc
        return None

    keys = list(accepted)
    if trial(keys) is not None:
        if trial([]) is not None:
            # (b) torch refuses the caller's own arguments: fail as it would.
            for k in keys:
                out.rejected[k] = "not applied: torch refuses the caller's own arguments"
            return result
        # (c) greedy, in the order given.
        kept = []
        for k in keys:
            e = trial(kept + [k])
            if e is None:
                kept.append(k)
            else:
                with_ = (" together with %s" % ", ".join(kept)) if kept else ""
                out.rejected[k] = "refused by torch%s: %s" % (with_, _message(e))
        keys = kept
    if keys:
        result.args, result.kwargs = call_args(self, keys)
        result.keys = keys
        for k in keys:
            out.applied[k] = json_value(accepted[k])
    return result
