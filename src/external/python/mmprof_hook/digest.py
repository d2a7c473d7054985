"""Batch size, payload bytes and content digest, in one walk of the batch.

The walk only reads: tensors are never modified, moved or made contiguous in
place (``contiguous()`` and ``cpu()`` return new tensors when they copy).

Digest: blake2b with a 16-byte output over a tagged, length-prefixed
serialisation of the batch structure, so that different structures cannot
collide by concatenation:

* tensor: ``T`` dtype shape, then its bytes in C order (a copy to the CPU for
  tensors on another device, only for the digested batches);
* numpy array: ``A`` dtype.str shape, then its bytes in C order (object arrays
  by the repr of their items);
* mapping: ``M`` length, then for each item in order of ``repr(key)``: the key's
  repr and the value;
* list / tuple (named tuples too): ``L`` / ``U`` length, then the items;
* str: ``S`` and UTF-8; bytes: ``B`` and the bytes;
* None, bool, int, float, complex: ``V`` and ``repr``;
* PIL images: ``I`` mode size and ``tobytes()``;
* any other object: ``O`` qualified class name, then its ``__dict__`` as a
  mapping when it has one, else its ``repr``.
"""

import hashlib
import sys

MAX_DEPTH = 32


class _Acc:
    __slots__ = ("size", "nbytes", "h", "torch", "np", "shapes")


MAX_SHAPES = 8  # tensors / arrays whose dtype and shape a batch record lists (walk order)


def _shape(acc, dtype, shape):
    if len(acc.shapes) < MAX_SHAPES:
        acc.shapes.append([str(dtype).replace("torch.", ""), [int(x) for x in shape]])


def _update_tensor(h, torch, t):
    h.update(b"T")
    h.update(str(t.dtype).encode())
    h.update(repr(tuple(t.shape)).encode())
    if t.layout != torch.strided:
        h.update(repr(t).encode())
        return
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    if t.is_quantized:
        t = t.int_repr()
    t = t.contiguous()
    if t.numel() == 0:
        return
    try:
        h.update(t.reshape(-1).view(torch.uint8).numpy())
    except Exception:
        h.update(repr(t.tolist()).encode())


def _update_ndarray(h, np, a):
    h.update(b"A")
    h.update(a.dtype.str.encode())
    h.update(repr(a.shape).encode())
    if a.dtype.hasobject:
        h.update(repr(a.tolist()).encode())
    else:
        h.update(np.ascontiguousarray(a).tobytes())


def _len_prefix(h, tag, n):
    h.update(tag)
    h.update(str(n).encode())
    h.update(b":")


def _walk(obj, acc, depth):
    torch = acc.torch
    h = acc.h
    if torch is not None and isinstance(obj, torch.Tensor):
        if acc.size is None and obj.dim() >= 1:
            acc.size = int(obj.shape[0])
        if obj.layout == torch.strided:
            acc.nbytes += obj.element_size() * obj.numel()
        if acc.shapes is not None:  # a loader's first batch only: nothing on the others
            _shape(acc, obj.dtype, obj.shape)
        if h is not None:
            _update_tensor(h, torch, obj)
        return
    np = acc.np
    if np is not None and isinstance(obj, np.ndarray):
        if acc.size is None and obj.ndim >= 1:
            acc.size = int(obj.shape[0])
        acc.nbytes += int(obj.nbytes)
        if acc.shapes is not None:
            _shape(acc, obj.dtype, obj.shape)
        if h is not None:
            _update_ndarray(h, np, obj)
        return
    if isinstance(obj, str):
        if h is not None:
            b = obj.encode("utf-8", "surrogatepass")
            _len_prefix(h, b"S", len(b))
            h.update(b)
        return
    if isinstance(obj, (bytes, bytearray, memoryview)):
        if h is not None:
            b = bytes(obj)
            _len_prefix(h, b"B", len(b))
            h.update(b)
        return
    if obj is None or isinstance(obj, (bool, int, float, complex)):
        if h is not None:
            r = repr(obj).encode()
            _len_prefix(h, b"V", len(r))
            h.update(r)
        return
    if depth >= MAX_DEPTH:
        if h is not None:
            r = repr(obj).encode("utf-8", "backslashreplace")
            _len_prefix(h, b"R", len(r))
            h.update(r)
        return
    if isinstance(obj, dict) or _is_mapping(obj):
        items = sorted(obj.items(), key=lambda kv: repr(kv[0]))
        if h is not None:
            _len_prefix(h, b"M", len(items))
        for k, v in items:
            if h is not None:
                r = repr(k).encode("utf-8", "backslashreplace")
                _len_prefix(h, b"K", len(r))
                h.update(r)
            _walk(v, acc, depth + 1)
        return
    if isinstance(obj, (list, tuple)):
        if h is not None:
            _len_prefix(h, b"L" if isinstance(obj, list) else b"U", len(obj))
        for v in obj:
            _walk(v, acc, depth + 1)
        return
    if hasattr(obj, "tobytes") and hasattr(obj, "mode") and hasattr(obj, "size") \
            and type(obj).__module__.startswith("PIL."):
        if h is not None:
            h.update(b"I")
            h.update(repr((obj.mode, tuple(obj.size))).encode())
            h.update(obj.tobytes())
        return
    cls = type(obj)
    if h is not None:
        name = ("%s.%s" % (cls.__module__, cls.__qualname__)).encode()
        _len_prefix(h, b"O", len(name))
        h.update(name)
    d = getattr(obj, "__dict__", None)
    if isinstance(d, dict):
        _walk(d, acc, depth + 1)
    elif h is not None:
        r = repr(obj).encode("utf-8", "backslashreplace")
        _len_prefix(h, b"R", len(r))
        h.update(r)


def _is_mapping(obj):
    import collections.abc
    return isinstance(obj, collections.abc.Mapping)


def batch_stats(batch, digest, shapes=False):
    """(size, nbytes, hex digest or None, shapes or None) of a batch as __next__ returned it.

    size: the first dimension of the first tensor / array met in the walk
    order above; if there is none, len(batch) when it has a length; else None.
    nbytes: the sum of element_size * numel over strided tensors and nbytes
    over arrays (the logical payload, not the storage it may be a view of).
    shapes (when asked): [dtype, shape] of the first MAX_SHAPES tensors and arrays.
    """
    acc = _Acc()
    acc.shapes = [] if shapes else None
    acc.size = None
    acc.nbytes = 0
    acc.h = hashlib.blake2b(digest_size=16) if digest else None
    torch = sys.modules.get("torch")
    acc.torch = torch if isinstance(getattr(torch, "Tensor", None), type) else None
    np = sys.modules.get("numpy")
    acc.np = np if isinstance(getattr(np, "ndarray", None), type) else None
    _walk(batch, acc, 0)
    size = acc.size
    if size is None:
        try:
            size = len(batch)
        except Exception:
            size = None
    return size, acc.nbytes, (acc.h.hexdigest() if acc.h is not None else None), acc.shapes
