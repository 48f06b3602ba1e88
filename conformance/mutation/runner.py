"""Run the conformance suite against mutants of ``reference_impl``, in process.

A mutant is loaded by executing the package's modules (one of them mutated) into fresh
module objects under a private package name, so the real ``reference_impl`` is never
touched and no Python process is started per mutant. The cases are loaded once; each
mutant runs them through the engine's loop (:class:`conformance.running.engine.Loop`, the policy
every command shares) with a :class:`~conformance.adapters.binding.BindingAdapter` over the
mutant package, exactly as the reference adapter does, and stops at the first case that does
not pass.
"""

from __future__ import annotations

import ast
import ctypes
import logging
import multiprocessing
import random
import sys
import threading
import time
import types
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.adapters.binding import BindingAdapter
from conformance.adapters.interface import Adapter
from conformance.common.jsontypes import JsonObject
from conformance.judging.outcome import Outcome
from conformance.loading.loader import load_suite
from conformance.model.cases import OPERATIONS, Case
from conformance.mutation.operators import Mutant, all_mutants
from conformance.running.engine import Loop, Policy

PACKAGE_DIR = Path(__file__).resolve().parent.parent.parent / "reference_impl"
_MUTANT_PACKAGE = "_pi_mutant"


class _Killed(BaseException):
    """Raised inside a hung mutant's worker thread to stop it (BaseException: mutants catch Exception)."""


@dataclass(frozen=True)
class Verdict:
    """What the suite made of one mutant."""

    mutant_id: str
    killed: bool
    #: The first case that did not pass, or why the mutant could not even be loaded.
    by: str
    duration_s: float


class _Package:
    """The reference's modules as parsed ASTs and compiled code, in import order."""

    def __init__(self, package_dir: Path) -> None:
        self.dir = package_dir
        self.trees: dict[str, ast.Module] = {}
        self.code: dict[str, types.CodeType] = {}
        for path in sorted(package_dir.glob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            self.trees[path.stem] = tree
            self.code[path.stem] = compile(tree, str(path), "exec")
        self.order = _import_order(self.trees)

    def load(self, mutant: Mutant | None) -> types.ModuleType:
        """A fresh copy of the package with ``mutant`` applied (None: the original)."""
        package = types.ModuleType(_MUTANT_PACKAGE)
        package.__path__ = []
        package.__package__ = _MUTANT_PACKAGE
        sys.modules[_MUTANT_PACKAGE] = package
        for name in self.order:
            code = self.code[name]
            if mutant is not None and mutant.module == name:
                code = compile(mutant.apply(self.trees[name]), str(self.dir / f"{name}.py"), "exec")
            if name == "__init__":
                module = package
            else:
                module = types.ModuleType(f"{_MUTANT_PACKAGE}.{name}")
                module.__package__ = _MUTANT_PACKAGE
                sys.modules[module.__name__] = module
            module.__file__ = str(self.dir / f"{name}.py")
            exec(code, module.__dict__)
            if module is not package:
                setattr(package, name, module)
        return package


def _import_order(trees: dict[str, ast.Module]) -> list[str]:
    """Modules sorted so that each comes after the package modules it imports (``__init__`` last)."""
    needs = {
        name: {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module}
        for name, tree in trees.items()
    }
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        for dependency in sorted(needs.get(name, set())):
            visit(dependency)
        order.append(name)

    for name in sorted(trees, key=lambda n: n == "__init__"):
        visit(name)
    return order


class _MutantAdapter(BindingAdapter):
    """The binding adapter, plus a way to stop a mutant that loops forever in its worker thread.

    The engine abandons a timed-out worker thread, which is right for students' code but
    would leave a busy mutant burning the CPU for the rest of the run. ``cancel`` raises
    :class:`_Killed` inside that thread instead.
    """

    _worker: threading.Thread | None = None

    def _enter(self) -> None:
        self._worker = threading.current_thread()

    def cancel(self) -> None:
        worker = self._worker
        if worker is None or worker.ident is None:
            return
        for _ in range(20):
            if not worker.is_alive():
                return
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident), ctypes.py_object(_Killed))
            worker.join(0.05)


def _tracked(name: str) -> Callable[..., JsonObject]:
    def method(self: _MutantAdapter, *args: Any) -> JsonObject:
        self._enter()
        result: JsonObject = getattr(BindingAdapter, name)(self, *args)
        return result

    method.__name__ = name
    return method


for _operation in sorted(OPERATIONS):
    setattr(_MutantAdapter, _operation, _tracked(_operation))


class MutationRun:
    """The cases, loaded once, and the package, parsed once; judges one mutant at a time."""

    def __init__(self, cases: Sequence[Case] | None = None, package_dir: Path = PACKAGE_DIR, timeout_s: float | None = None) -> None:
        self.cases = list(cases) if cases is not None else load_suite().cases
        self.package = _Package(package_dir)
        self.timeout_s = timeout_s
        # Cases that killed earlier mutants are tried first: most mutants die on one of a few.
        self._killers: list[str] = []

    def judge(self, mutant: Mutant | None) -> Verdict:
        """Run the cases against ``mutant`` until one does not pass."""
        started = time.perf_counter()
        try:
            binding = self.package.load(mutant)
        except Exception as error:  # a mutant that cannot even be imported is observable by every case
            return Verdict(
                mutant.id if mutant else "original", True, f"load: {type(error).__name__}: {error}", time.perf_counter() - started
            )
        by_id = {case.id: case for case in self.cases}
        ordered = [by_id[i] for i in self._killers] + [case for case in self.cases if case.id not in self._killers]
        # The engine's loop, stopped by the first case that does not pass: the cases after it are not run.
        killer: list[Outcome] = []
        stop = threading.Event()

        def first_failure(outcome: Outcome) -> Outcome:
            if outcome.status != "passed" and not killer:
                killer.append(outcome)
                stop.set()
            return outcome

        def fresh() -> Adapter:
            return _MutantAdapter(binding, name="mutant")

        Loop(Policy(timeout_s=self.timeout_s, stop=stop), fresh, on_outcome=first_failure).run(fresh(), ordered)
        if not killer:
            return Verdict(mutant.id if mutant else "original", False, "", time.perf_counter() - started)
        case_id = killer[0].case_id
        if case_id in self._killers:
            self._killers.remove(case_id)
        self._killers.insert(0, case_id)
        del self._killers[40:]
        return Verdict(mutant.id if mutant else "original", True, f"{case_id}: {killer[0].status}", time.perf_counter() - started)


# -- parallel driver ------------------------------------------------------------------------

_WORKER: MutationRun | None = None
_MUTANTS: dict[str, Mutant] = {}


def _work(mutant_id: str) -> Verdict:
    assert _WORKER is not None
    return _WORKER.judge(_MUTANTS[mutant_id])


def run_mutants(
    mutants: Sequence[Mutant], jobs: int = 1, progress: Callable[[int, int], None] | None = None, fixtures: Path | None = None
) -> list[Verdict]:
    """Judge every mutant, in ``jobs`` forked worker processes (1: in this process)."""
    asyncio_log = logging.getLogger("asyncio")
    level = asyncio_log.level
    # A mutant that breaks a deferred callback makes asyncio log a traceback per case; the
    # verdict already says what happened, so the logs would only bury the report.
    asyncio_log.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            # Mutants such as `x is not ''` compile with a SyntaxWarning, and a removed `await`
            # leaves a coroutine never awaited: both are the mutant's doing, the verdict covers them.
            warnings.filterwarnings("ignore", category=SyntaxWarning)
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            return _run_mutants(mutants, jobs, progress, fixtures)
    finally:
        asyncio_log.setLevel(level)


def _run_mutants(mutants: Sequence[Mutant], jobs: int, progress: Callable[[int, int], None] | None, fixtures: Path | None) -> list[Verdict]:
    global _WORKER
    run = MutationRun(load_suite(fixtures).cases if fixtures else None)
    original = run.judge(None)
    if original.killed:
        raise RuntimeError(f"the unmutated reference does not pass the suite: {original.by}")
    verdicts: list[Verdict] = []
    if jobs <= 1 or len(mutants) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        for mutant in mutants:
            verdicts.append(run.judge(mutant))
            if progress:
                progress(len(verdicts), len(mutants))
        return verdicts
    # fork: each worker inherits the loaded cases and parsed package, nothing is reloaded.
    _WORKER = run
    _MUTANTS.update({mutant.id: mutant for mutant in mutants})
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for verdict in pool.imap_unordered(_work, [mutant.id for mutant in mutants], chunksize=4):
            verdicts.append(verdict)
            if progress:
                progress(len(verdicts), len(mutants))
    order = {mutant.id: index for index, mutant in enumerate(mutants)}
    return sorted(verdicts, key=lambda verdict: order[verdict.mutant_id])


def sample(mutants: Sequence[Mutant], count: int, seed: int) -> list[Mutant]:
    """A fixed-seed sample of ``count`` mutants, in their original order."""
    if count >= len(mutants):
        return list(mutants)
    chosen = set(random.Random(seed).sample(range(len(mutants)), count))
    return [mutant for index, mutant in enumerate(mutants) if index in chosen]


def mutants_of_reference(package_dir: Path = PACKAGE_DIR) -> list[Mutant]:
    """Every mutant of ``reference_impl``."""
    return all_mutants(package_dir)


def by_operator(mutants: Iterable[Mutant], verdicts: Iterable[Verdict]) -> dict[str, dict[str, int]]:
    """``{operator: {total, killed}}``."""
    killed = {verdict.mutant_id for verdict in verdicts if verdict.killed}
    counts: dict[str, dict[str, int]] = {}
    for mutant in mutants:
        entry = counts.setdefault(mutant.operator, {"total": 0, "killed": 0})
        entry["total"] += 1
        entry["killed"] += mutant.id in killed
    return counts
