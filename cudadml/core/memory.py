"""Where an array's memory is: its kind (host or CuPy device), byte address, extent and
alignment; and how much host memory the caches hold (``CACHE``, bounded in bytes, and ``kept``).

Every cache of cudadml is listed in one registry (``cache``, ``register_cache``): ``cache_info``
reports them, ``clear_caches`` empties them."""

from __future__ import annotations

import collections
import functools
import operator
import sys
import threading
import weakref

import numpy as np

from .overlap import extent
from .tensor import MIN_BINDING_ALIGNMENT

#: The alignment, in bytes, of the buffers a graph binds and of the parts of one allocation:
#: DirectML's binding rule, 16 bytes, the widest vector access the kernels make (they make it
#: only at such addresses).
ALIGNMENT = MIN_BINDING_ALIGNMENT

#: The byte address of element 0 of a NumPy array and of a CuPy array: C-level getters, as fast
#: as the attribute read inline, for per-call code (``address_of`` takes either kind).
numpy_address = operator.attrgetter("ctypes.data")
cupy_address = operator.attrgetter("data.ptr")


def address_of(a) -> int:
    """Byte address of element 0 of a NumPy or CuPy array, or of a torch tensor."""
    if isinstance(a, np.ndarray):
        return numpy_address(a)
    data = a.data
    return data.ptr if hasattr(data, "ptr") else a.data_ptr()  # (CuPy's memory pointer; torch's tensor)


def element_strides(shape, strides, per_element):
    """``strides`` in elements of ``per_element`` stride units, or None where one is not whole.
    An axis of one element, or any axis of an empty array, moves nowhere: its stride counts as 0
    (a record's field of one element has strides of the record's size)."""
    if 0 in shape:
        return (0,) * len(shape)
    if any(s % per_element for n, s in zip(shape, strides) if n != 1):
        return None
    return tuple(s // per_element if n != 1 else 0 for n, s in zip(shape, strides))


def byte_extent(a) -> tuple[int, int]:
    """``[low, high)`` bytes that the elements of ``a`` occupy, whatever its strides."""
    address = address_of(a)
    if a.size == 0:
        return address, address
    return extent(address, a.itemsize, a.shape, a.strides)


# ---- what the caches hold -------------------------------------------------------------------
# Every cache of cudadml whose entries can grow with a call (a join of many arrays, windows of
# their own sizes, a split into many parts) keeps them in ``CACHE``, one store bounded in bytes:
# the array functions' compiled calls (``runner``), what ``kept`` memoizes (the windows
# batches' operators and descriptors, the PyTorch adapter's tables) and what a ``KeptDict``
# holds (a fused function's traces and compiled graphs). The caches bounded in number whose
# entries are small and bounded too (parsed indices, tensors of at most eight dimensions,
# window walks) stay ``functools.lru_cache``s: the most they hold is ``FIXED_BYTES``, left out
# of ``CACHE``'s bound (``tests/test_cache_memory.py`` fills each and measures).

#: The most host memory, in bytes, that cudadml's caches hold together (the guide's promise;
#: public as ``cudadml.CACHE_BYTES``).
CACHE_BYTES = 64 * 2**20
#: Of ``CACHE_BYTES``, what the caches bounded in number hold at most, filled.
FIXED_BYTES = 7 * 2**20

# An entry's bytes are estimated from what it holds, counted: per array bound (its layout in the
# key, its tensor in the descriptor, its binding slot, its copy job), per dimension of each, and
# for the kernels (CUDA and their host emulation) the launches' parameter structs, whose jobs
# are padded to the launch's rank. Counting costs under one percent of a compile (16 us for a
# join of 201 arrays), where a walk of every object it made would cost a third to a half of
# one. The constants are tracemalloc's measure of joins, splits, slices, windows and fused
# graphs of 1 to 8 dimensions, rounded up (``tests/test_cache_memory.py`` checks each): an
# entry is estimated at 1.0 to 1.6 times what it holds, the windows' and fused operators at up
# to 3 times on the reference backend (their launches are counted, though it makes none).
# Not counted: what an entry makes later, on first need, for calls its key does not tell
# apart: narrower launches for arrays at addresses that are not a multiple of their element
# size, launches of another host backend (``use_host_backend``) than the one it was compiled
# under, a thread's copy of a launch's parameters where the compiled launcher is missing.
_ENTRY_BYTES = 2500  # an entry with nothing bound: its key, operator, descriptor and plan
_ARRAY_BYTES = 900  # per array bound
_DIM_BYTES = 65  # per dimension of an array, in the key and again in the operator
_LAUNCH_BYTES = 7000  # per kernel launch prepared
_JOBS_PER_LAUNCH = 64  # the fewest jobs that a launch of a batch takes (its capacity at rank 8)
_JOB_BYTES = 600  # per job of a launch (its parameters, their template, its address slots)
_JOB_DIM_BYTES = 60  # per job and dimension of the launch
_TENSOR_BYTES = 300  # per tensor of a descriptor: the tuples that list it, its name
_OWN_TENSOR_BYTES = 400  # per tensor a descriptor holds alone


def operator_bytes(op, launched=True) -> int:
    """Estimated bytes that the ``CompiledOperator`` ``op`` holds beyond ``_ENTRY_BYTES``: its
    bindings' slots and tensors, its plans and, where ``launched``, the kernels' launches that
    its first run prepares (the reference backend prepares nothing: it runs the plan)."""
    slots = op._in + op._out  # one per bound array, whatever the operator (a batch, a graph)
    nbytes = _ARRAY_BYTES * len(slots) + _DIM_BYTES * sum(len(slot.shape) for slot in slots)
    if launched:
        for plan in getattr(op, "plans", None) or (op.plan,):
            jobs = getattr(plan, "jobs", None)
            if jobs is None:  # a gradient's, a windows batch's: one launch of the plan's rank
                count, rank = 1, len(plan.sizes)
            else:
                count, rank = len(jobs), max((len(j.sizes) for j in jobs), default=0)
            nbytes += _LAUNCH_BYTES * (1 + count // _JOBS_PER_LAUNCH) + count * (_JOB_BYTES + _JOB_DIM_BYTES * rank)
    return nbytes


def descriptor_bytes(desc, shared=False) -> int:
    """Estimated bytes that an operator descriptor holds beyond ``_ENTRY_BYTES``: per tensor,
    its place in the descriptor's lists and, unless the tensors are ``shared`` (kept by a cache
    of their own), the tensor itself."""
    tensors = (*desc.input_tensors, *desc.output_tensors)
    nbytes = _TENSOR_BYTES * len(tensors)
    if not shared:
        nbytes += _OWN_TENSOR_BYTES * len(tensors) + _DIM_BYTES * sum(len(t.sizes) for t in tensors)
    return nbytes


def key_dims(layouts) -> int:
    """The dimensions of ``layouts`` (a key's ``(shape, ...)`` per array) in all."""
    return sum(len(layout[0]) for layout in layouts)


def entry_bytes(dims, op=None, arrays=0, launched=True) -> int:
    """Estimated bytes of an entry whose key holds arrays of ``dims`` dimensions in all and whose
    value is the ``CompiledOperator`` ``op`` (or, for None, ``arrays`` shapes)."""
    nbytes = _ENTRY_BYTES + _DIM_BYTES * dims
    return nbytes + (_ARRAY_BYTES * arrays if op is None else operator_bytes(op, launched))


def nested_bytes(value) -> int:
    """``sys.getsizeof`` of ``value`` and of the tuples, lists, dicts, numbers, strings and NumPy
    arrays in it: what a key or a table of shapes holds. Other objects (dtypes, enums, functions,
    classes) count nothing: they are shared."""
    total, stack, getsizeof = 0, [value], sys.getsizeof
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.items())
        elif not isinstance(v, (int, float, complex, str, bytes, np.ndarray)):
            continue
        total += getsizeof(v)
    return total


class Kept:
    """A value that ``kept`` memoizes, as ``Cache`` holds it: its estimated bytes and its mark."""

    __slots__ = ("nbytes", "used", "value")

    def __init__(self, value, nbytes):
        self.value, self.nbytes, self.used = value, nbytes, False


class Cache:
    """Entries by key, bounded in estimated bytes (each entry's ``nbytes``), dropping the least
    recently used first as CLOCK approximates it: a hit only marks its entry (``used``; moving
    it to the back would hash the key, which holds every array's layout, a second time per
    call); past the bound, the oldest entry goes unless it is marked, in which case it loses
    its mark and moves to the back. Lookups take no lock (a dict's ``get`` is atomic)."""

    def __init__(self, limit):
        self.limit, self.nbytes = limit, 0
        # Oldest first (an OrderedDict finds its first entry at once, where a dict whose first
        # entries were deleted walks past their holes); ``runner`` reads it on its hit path.
        self._entries = collections.OrderedDict()
        self._lock = threading.Lock()

    def __len__(self):
        return len(self._entries)

    def get(self, key):
        """The entry under ``key``, marked, or None."""
        entry = self._entries.get(key)
        if entry is not None:
            entry.used = True
        return entry

    def add(self, key, entry):
        """Keep ``entry`` under ``key`` (unless a thread kept one first: that one is returned),
        dropping others past the bound; returns the entry kept."""
        with self._lock:
            kept = self._entries.setdefault(key, entry)
            if kept is entry:
                self.nbytes += entry.nbytes
                self._trim(entry)
        return kept

    def _trim(self, newest):
        """Drop entries, oldest first and sparing marked ones once, until within the bound
        (``newest`` stays). Every pass unmarks or drops, so it ends."""
        entries = self._entries
        while self.nbytes > self.limit and len(entries) > 1:
            key, oldest = next(iter(entries.items()))
            if oldest.used or oldest is newest:
                oldest.used = False
                entries.move_to_end(key)
            else:
                del entries[key]
                self.nbytes -= oldest.nbytes

    def pop(self, key):
        """The entry under ``key``, taken out, or None."""
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None:
                self.nbytes -= entry.nbytes
        return entry

    def drop(self, keep):
        """Drop the entries whose key ``keep(key)`` says no to."""
        with self._lock:
            for key in [k for k in self._entries if not keep(k)]:
                self.nbytes -= self._entries.pop(key).nbytes

    def clear(self):
        with self._lock:
            self._entries.clear()
            self.nbytes = 0


CACHE = Cache(CACHE_BYTES - FIXED_BYTES)


def kept(size):
    """A decorator: the function memoized in ``CACHE`` (as ``functools.lru_cache`` memoizes,
    with its ``cache_info()``, in bytes, and ``cache_clear()``) and registered under its
    qualified name, each entry estimated at its arguments' ``nested_bytes`` plus
    ``size(value)`` (``operator_bytes``, ``descriptor_bytes``, ``nested_bytes``). For caches
    whose entries grow with a call, which a bound on their number does not bound. A hit costs
    about 70 ns more than ``lru_cache``'s."""

    def decorate(function):
        entries, counts = CACHE._entries, [0, 0]  # hits, misses
        tag = object()  # the first item of this cache's keys: never another cache's, nor a call

        @functools.wraps(function)
        def memoized(*args):
            entry = entries.get((tag, args))
            if entry is not None:
                entry.used = True
                counts[0] += 1
                return entry.value
            counts[1] += 1
            value = function(*args)
            return CACHE.add((tag, args), Kept(value, _ENTRY_BYTES + nested_bytes(args) + size(value))).value

        def cache_info():
            held = sum(e.nbytes for k, e in list(entries.items()) if k[0] is tag)
            return CacheInfo(counts[0], counts[1], CACHE.limit, held, "bytes")

        def cache_clear():
            CACHE.drop(lambda k: k[0] is not tag)
            counts[:] = [0, 0]

        memoized.cache_info, memoized.cache_clear = cache_info, cache_clear
        name = f"{function.__module__}.{function.__qualname__}"
        twice = sum(n.split(" ")[0] == name for n in _CACHES)  # (a function kept by two caches)
        register_cache(f"{name} ({twice + 1})" if twice else name, memoized)
        return memoized

    return decorate


class KeptDict:
    """A mapping whose values ``CACHE`` keeps (each estimated at ``size(value)`` bytes) and drops
    when its bound needs the room: ``get`` then finds nothing, and the owner makes the value
    again. For the caches of an object (a fused function's compiled graphs) that the one bound
    in bytes covers too. Its owner serialises changes (as it would a dict's)."""

    def __init__(self, size):
        self._size = size
        self._keys = collections.OrderedDict()  # this mapping's keys, oldest first (some dropped)

    def get(self, key, default=None):
        entry = CACHE.get((self, key))
        return default if entry is None else entry.value

    def __setitem__(self, key, value):
        entries = CACHE._entries
        for k in [k for k in self._keys if (self, k) not in entries]:  # (the keys CACHE dropped)
            del self._keys[k]
        self._keys[key] = None
        self._keys.move_to_end(key)
        CACHE.pop((self, key))  # (a value set again replaces the one kept)
        CACHE.add((self, key), Kept(value, _ENTRY_BYTES + nested_bytes(key) + self._size(value)))

    def __contains__(self, key):
        return (self, key) in CACHE._entries

    def __len__(self):
        return sum((self, k) in CACHE._entries for k in self._keys)

    def values(self):
        held = [CACHE._entries.get((self, k)) for k in list(self._keys)]
        return [entry.value for entry in held if entry is not None]

    def move_to_end(self, key):
        self._keys.move_to_end(key)

    def popitem(self, last=True):
        """The newest (``last``) or oldest key and value, taken out; KeyError when empty."""
        while True:
            key, _ = self._keys.popitem(last)
            entry = CACHE.pop((self, key))
            if entry is not None:
                return key, entry.value

    def clear(self):
        CACHE.drop(lambda k: k[0] is not self)
        self._keys.clear()


def aligned_empty(nbytes, xp=np, alignment=256):
    """A uint8 array (NumPy or CuPy: ``xp``) of ``nbytes`` whose first byte is
    ``alignment``-aligned."""
    return aligned_part(xp.empty(nbytes + alignment, np.uint8), nbytes, alignment)


def aligned_part(raw, nbytes, alignment):
    """The ``nbytes`` of ``raw`` (a uint8 vector, NumPy, CuPy or torch, ``alignment`` bytes
    longer) from its first ``alignment``-aligned byte."""
    start = -address_of(raw) % alignment
    return raw[start : start + nbytes]


# ---- the registry of caches ------------------------------------------------------------------
# Every cache of cudadml is registered here by name, so ``cudadml.cache_info`` lists them and
# ``cudadml.clear_caches`` empties them: those bounded in number (``cache``), those memoized in
# ``CACHE`` (``kept``, registered as they are made), the caches each instance of a class holds
# (``PerInstance``) and ``CACHE`` itself, which holds the array functions' compiled calls too.

#: What ``cache_info`` reports of a cache: its ``hits`` and ``misses`` (None where it counts
#: none: a count would cost its hit path), its bound ``maxsize`` and its size ``currsize``, in
#: ``unit`` ("entries", or "bytes" for what ``CACHE`` holds: its bound is shared).
CacheInfo = collections.namedtuple("CacheInfo", ["hits", "misses", "maxsize", "currsize", "unit"])

_CACHES: dict[str, object] = {}


def register_cache(name, cache):
    """List ``cache`` (an object with ``cache_info()`` and ``cache_clear()``) as ``name``."""
    _CACHES[name] = cache


def cache(maxsize):
    """A decorator: the function memoized by ``functools.lru_cache(maxsize)``, registered under
    its qualified name."""

    def decorate(function):
        memoized = functools.lru_cache(maxsize)(function)
        register_cache(f"{function.__module__}.{function.__qualname__}", memoized)
        return memoized

    return decorate


class PerInstance:
    """One registry entry for a cache that each instance of a class holds (a fused function's
    traces, an ONNX session's graphs): ``add`` each instance, held weakly; ``size(instance)``
    counts its entries, ``clear(instance)`` empties them, ``maxsize`` bounds them."""

    def __init__(self, name, maxsize, size, clear):
        self._instances = weakref.WeakSet()
        self.maxsize, self._size, self._clear = maxsize, size, clear
        register_cache(name, self)

    def add(self, instance):
        self._instances.add(instance)

    def cache_info(self):
        live = list(self._instances)
        return CacheInfo(None, None, self.maxsize * len(live), sum(map(self._size, live)), "entries")

    def cache_clear(self):
        for instance in list(self._instances):
            self._clear(instance)


class _Store:
    """``CACHE`` as the registry lists it: its bound and what it holds, in bytes."""

    def cache_info(self):
        return CacheInfo(None, None, CACHE.limit, CACHE.nbytes, "bytes")

    def cache_clear(self):
        CACHE.clear()


register_cache(f"{__name__}.CACHE", _Store())


def cache_info() -> dict:
    """Every cache of cudadml, by name: its ``CacheInfo``.

    Returns
    -------
    dict of str to CacheInfo
        Per cache, its qualified name (the function it memoizes, or what holds it) and a
        ``CacheInfo``: ``hits`` and ``misses`` (None where the cache counts none), ``maxsize``
        (its bound) and ``currsize`` (what it holds), in ``unit``: "entries", or "bytes" for
        the caches whose entries share ``cudadml.CACHE_BYTES``'s store (``maxsize``: the
        store's bound). A module's caches are listed once it is imported.

    Raises
    ------
    None
        It only reads the caches.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> _ = cd.join([np.zeros(2), np.ones(3)])
    >>> info = cd.cache_info()["cudadml.core.memory.CACHE"]
    >>> info.unit, 0 < info.currsize <= info.maxsize
    ('bytes', True)
    """
    return {name: _info(c.cache_info()) for name, c in sorted(_CACHES.items())}


def _info(info):
    """``info`` as a ``CacheInfo`` (``functools``' has no unit: its caches count entries)."""
    return info if type(info) is CacheInfo else CacheInfo(*info, "entries")


def clear_caches() -> None:
    """Empty every cache of cudadml (``cache_info`` lists them): later calls compile again.

    Raises
    ------
    None
        Nothing is refused.

    Examples
    --------
    >>> import numpy as np, cudadml as cd
    >>> _ = cd.join([np.zeros(2), np.ones(3)])
    >>> cd.clear_caches()
    >>> cd.cache_info()["cudadml.core.memory.CACHE"].currsize
    0
    """
    for c in list(_CACHES.values()):
        c.cache_clear()
