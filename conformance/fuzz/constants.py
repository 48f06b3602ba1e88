"""Keep Hypothesis's draws a function of the seed alone: no constants mined from the caller's modules.

Hypothesis (6.131 and later) now and then draws a literal found in the source of "local"
modules: those imported so far that live outside the standard library and site-packages.
The same seed then draws other programs after one more import, in an editable install
rather than a wheel, or in a process that has imported other code (a test runner, a
server that forks commands). ``--seed`` and ``--examples`` promise the same programs on any
machine, so the fuzzer draws with Hypothesis's built-in constants only.

This reaches into Hypothesis's internals (there is no setting for it);
``tests/fuzz/test_fuzz.py`` checks that the draws stay the same across such an import, so a
Hypothesis release that moves them fails there rather than silently.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
#: How many blocks are inside without_local_constants (fuzz runs may overlap in threads), and
#: what to put back when the last one leaves.
_depth = 0
_original: Any = None


@contextmanager
def without_local_constants() -> Iterator[None]:
    """Within the block, Hypothesis draws no constant taken from the caller's own modules."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # a Hypothesis from before local constants: nothing to turn off
        yield
        return
    if getattr(providers, "_get_local_constants", None) is None:
        yield
        return
    global _depth, _original
    with _lock:
        if _depth == 0:
            _original = providers._get_local_constants
            none = Constants()
            providers._get_local_constants = lambda: none
            _clear_constants_cache(providers)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                providers._get_local_constants = _original
                _clear_constants_cache(providers)


def _clear_constants_cache(providers: Any) -> None:
    # The cache of permitted constants per choice may hold local ones from an earlier draw.
    cache = getattr(providers, "CONSTANTS_CACHE", None)
    if cache is not None:
        cache.cache.clear()
