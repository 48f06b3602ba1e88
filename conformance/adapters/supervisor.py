"""The supervisor that starts an implementation's program and takes everything it started down with it.

Run as a script, outside any package (``python -I -S supervisor.py CPU MEMORY PROGRAM ARGS...``),
between the grader and the program (or the ``bwrap`` that holds it). It

- becomes a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``): a process the program
  starts stays in this supervisor's tree even when it daemonizes (double fork, ``setsid``),
  so it can always be found and killed;
- sets the CPU and address-space limits, then runs the program in a forked child;
- when the program exits, kills whatever the program left running (a stray child that holds
  stdout open would otherwise keep the grader waiting for an end of file forever), reaps
  it, and exits with the program's status (re-raising its signal, so the grader's report
  still says "killed by SIGXCPU");
- does the same on SIGTERM (the grader stopping it), or when the grader itself is gone.

It uses the standard library only and keeps no copy of the program's stdin or stdout. It
starts once per program start, so it imports little (no pathlib: plain ``os`` calls).
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys
import time

_PR_SET_CHILD_SUBREAPER = 36
_POLL_S = 0.5
_REAP_DEADLINE_S = 3.0
_KILL_ROUNDS = 100


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid``, read from ``/proc/<pid>/task/*/children``."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        folder = f"/proc/{parent}/task"
        try:
            tasks = os.listdir(folder)
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"{folder}/{task}/children", encoding="ascii") as file:
                    children = [int(text) for text in file.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(children)
            pending.extend(children)
    return found


def reap(block_until: float | None = None) -> list[tuple[int, int]]:
    """Collect exited children: without waiting, or until none is left or ``block_until`` passes."""
    reaped: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid:
            reaped.append((pid, status))
            continue
        if block_until is None or time.monotonic() > block_until:
            return reaped
        time.sleep(0.01)


def kill_tree() -> None:
    """SIGKILL every descendant, round after round (a forking child may add more), then reap them."""
    me = os.getpid()
    for _ in range(_KILL_ROUNDS):
        pids = descendants(me)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reap()  # orphans re-parented to us turn into zombies: collect them between rounds
    reap(time.monotonic() + _REAP_DEADLINE_S)


def exit_like(status: int) -> None:
    """Exit with the program's exit status, or die of the same signal."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def start(argv: list[str], cpu_s: int, memory_bytes: int) -> int:
    """Fork the program with its limits; the child reports a failed exec on stderr (status 127)."""
    pid = os.fork()
    if pid:
        return pid
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        if cpu_s:
            # Hard limit one second above the soft one: SIGXCPU (a clear reason) before SIGKILL.
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        os.execv(argv[0], argv)
    except OSError as error:
        os.write(2, f"cannot start {argv[0]}: {error.strerror}\n".encode())
    os._exit(127)


def main() -> None:
    """Supervise ``argv[3:]`` with the limits ``argv[1]`` (CPU seconds) and ``argv[2]`` (bytes)."""
    cpu_s, memory_bytes, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    grader = os.getppid()
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crashing program leaves no core file behind
    watched = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    program = start(argv, cpu_s, memory_bytes)
    # Only the program holds its stdin and stdout: their end of file is its own.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    while True:
        received = signal.sigtimedwait(watched, _POLL_S)
        if (received is not None and received.si_signo != signal.SIGCHLD) or os.getppid() != grader:
            kill_tree()
            os._exit(128 + signal.SIGTERM)
        for pid, status in reap():
            if pid == program:
                kill_tree()
                exit_like(status)


if __name__ == "__main__":
    main()
