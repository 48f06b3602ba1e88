"""The supervisor that starts an implementation's program and takes everything it started down with it.

Run as a script, outside any package (``python -I -S supervisor.py [OPTIONS] CPU MEMORY PROGRAM ARGS...``),
between the grader and the program (or the ``bwrap`` that holds it). It

- becomes a *child subreaper* (Linux ``PR_SET_CHILD_SUBREAPER``): a process the program
  starts stays in this supervisor's tree even when it daemonizes (double fork, ``setsid``),
  so it can always be found and killed;
- with ``--cgroup KIND:PARENT`` (``unified``, ``memory`` or ``pids``; repeatable), creates
  the program's own cgroup ``PARENT/pi-conformance-<its pid>`` with the ``--memory BYTES``
  and ``--pids N`` limits; the forked child enters it before it runs the program, while
  the supervisor itself stays outside (the kernel's out-of-memory killer never picks it);
- sets the CPU (``CPU`` seconds), address-space (``MEMORY`` bytes, 0 for none), file-size
  (``--fsize BYTES``) and, without a pids cgroup, process-count (``--nproc N`` more than the
  user runs already) limits, then runs the program in the forked child;
- when the program exits, kills whatever the program left running (a stray child that holds
  stdout open would otherwise keep the grader waiting for an end of file forever), reaps
  it, and exits with the program's status (re-raising its signal, so the grader's report
  still says "killed by SIGXCPU");
- does the same on SIGTERM (the grader stopping it), or when the grader itself is gone;
- says on stderr which cgroup limit the kernel enforced (the program's stderr ends up in its
  error report), and removes the cgroups once nothing is left in them.

A cgroup that cannot be set up stops the start (status 125): limits said to hold must hold.

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
GROUP_PREFIX = "pi-conformance-"
#: The program's cgroups: (kind, folder) each.
Groups = tuple[tuple[str, str], ...]
_CANNOT_LIMIT = 125


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


def kill_tree(groups: Groups = ()) -> None:
    """SIGKILL every descendant and every member of the program's cgroups, round after round
    (a forking child may add more), then reap them."""
    me = os.getpid()
    for _ in range(_KILL_ROUNDS):
        pids = sorted(set(descendants(me)) | set(members(groups)))
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
        if number != signal.SIGKILL:  # SIGKILL (the out-of-memory killer's) has no handler to reset
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


class Options:
    """The command line: the limits, then the program."""

    def __init__(self, args: list[str]) -> None:
        self.groups: list[tuple[str, str]] = []
        self.memory = self.pids = self.fsize = self.nproc = 0
        #: The user and group the program runs as (``--run-as``); -1: the supervisor's own.
        self.uid = self.gid = -1
        while args and args[0].startswith("--"):
            name, value, args = args[0], args[1], args[2:]
            if name == "--cgroup":
                kind, _, parent = value.partition(":")
                self.groups.append((kind, parent))
            else:
                setattr(self, name[2:], int(value))
        self.cpu_s, self.address_space, self.argv = int(args[0]), int(args[1]), args[2:]


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as file:
        file.write(text)


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as file:
            return file.read()
    except OSError:
        return ""


def _clear_stale(folder: str) -> None:
    """Remove a group left by a supervisor that was killed and whose pid this one now has.

    Named after its supervisor's pid, it cannot belong to a live one: what is still in it is
    a dead run's leftover, killed here.
    """
    for _ in range(_KILL_ROUNDS):
        for text in _read(f"{folder}/cgroup.procs").split():
            try:
                os.kill(int(text), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        try:
            os.rmdir(folder)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


def create_groups(options: Options) -> Groups:
    """The program's cgroups, created with their limits."""
    made: list[tuple[str, str]] = []
    try:
        for kind, parent in options.groups:
            folder = os.path.join(parent, f"{GROUP_PREFIX}{os.getpid()}")
            if os.path.isdir(folder):
                _clear_stale(folder)
            os.mkdir(folder)
            made.append((kind, folder))
            if kind == "unified":
                if options.memory:
                    _write(f"{folder}/memory.max", str(options.memory))
                    _optional(f"{folder}/memory.swap.max", "0")
                    _optional(f"{folder}/memory.oom.group", "1")  # one out of memory: the whole program goes
                if options.pids:
                    _write(f"{folder}/pids.max", str(options.pids))
            elif kind == "memory" and options.memory:
                _write(f"{folder}/memory.limit_in_bytes", str(options.memory))
                _optional(f"{folder}/memory.memsw.limit_in_bytes", str(options.memory))  # no escape into swap
            elif kind == "pids" and options.pids:
                _write(f"{folder}/pids.max", str(options.pids))
    except OSError as error:
        os.write(2, f"pi-conformance: cannot set up the resource limits: {error}\n".encode())
        remove_groups(tuple(made))
        os._exit(_CANNOT_LIMIT)
    return tuple(made)


def _optional(path: str, text: str) -> None:
    try:
        _write(path, text)
    except OSError:
        pass  # absent on this kernel (no swap accounting): nothing to limit there


def members(groups: Groups) -> list[int]:
    """Every process in the program's cgroups."""
    found: list[int] = []
    for _, folder in groups:
        found += [int(text) for text in _read(f"{folder}/cgroup.procs").split() if text.isdigit()]
    return found


def remove_groups(groups: Groups) -> None:
    """Remove the (empty, or emptying) cgroups, waiting a little for their last processes to go."""
    deadline = time.monotonic() + _REAP_DEADLINE_S
    for _, folder in groups:
        while True:
            try:
                os.rmdir(folder)
                break
            except FileNotFoundError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    break
                for pid in members((("", folder),)):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.02)


def _counter(text: str, name: str) -> int:
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name and value.strip().isdigit():
            return int(value)
    return 0


def limits_hit(groups: Groups, options: Options) -> list[str]:
    """What the kernel refused the program: its memory (processes killed) or its processes (forks failed)."""
    hit: list[str] = []
    for kind, folder in groups:
        if kind in ("unified", "memory"):
            events = _read(f"{folder}/memory.events" if kind == "unified" else f"{folder}/memory.oom_control")
            killed = _counter(events, "oom_kill")
            if killed:
                hit.append(f"the memory limit ({options.memory // 1048576} MiB in total) was reached: {killed} process(es) killed")
        if kind in ("unified", "pids"):
            refused = _counter(_read(f"{folder}/pids.events"), "max")
            if refused:
                hit.append(f"the process limit ({options.pids} processes and threads) was reached: {refused} fork(s) refused")
    return hit


def _user_tasks() -> int:
    """How many processes and threads this user runs (what ``RLIMIT_NPROC`` counts)."""
    uid, count = os.getuid(), 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid == uid:
                stat = _read(f"/proc/{entry}/stat")
                count += int(stat.rsplit(")", 1)[1].split()[17])
        except (OSError, IndexError, ValueError):
            continue
    return count


def start(argv: list[str], cpu_s: int, memory_bytes: int, options: Options | None = None, groups: Groups = ()) -> int:
    """Fork the program with its limits; the child reports a failed exec on stderr (status 127)."""
    nproc = _user_tasks() + options.nproc if options is not None and options.nproc else 0
    pid = os.fork()
    if pid:
        return pid
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        for _, folder in groups:
            try:
                _write(f"{folder}/cgroup.procs", str(os.getpid()))
            except OSError as error:
                os.write(2, f"pi-conformance: cannot enter the cgroup {folder}: {error.strerror}\n".encode())
                os._exit(_CANNOT_LIMIT)
        if cpu_s:
            # Hard limit one second above the soft one: SIGXCPU (a clear reason) before SIGKILL.
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
        if memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
        if options is not None and options.fsize:
            resource.setrlimit(resource.RLIMIT_FSIZE, (options.fsize, options.fsize))
        if nproc:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        if options is not None and options.uid >= 0:
            # Last: the cgroup and the limits are set by the privileged supervisor, which the
            # program then cannot signal; it runs with that user's rights and no other group.
            os.setgroups([])
            os.setgid(options.gid)
            os.setuid(options.uid)
        os.execv(argv[0], argv)
    except OSError as error:
        os.write(2, f"cannot start {argv[0]}: {error.strerror}\n".encode())
    os._exit(127)


def main() -> None:
    """Supervise the program with the limits of the command line (see the module's docstring)."""
    options = Options(sys.argv[1:])
    grader = os.getppid()
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crashing program leaves no core file behind
    watched = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    groups = create_groups(options)
    program = start(options.argv, options.cpu_s, options.address_space, options, groups)
    # Only the program holds its stdin and stdout: their end of file is its own.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)

    def end() -> None:
        kill_tree(groups)
        for line in limits_hit(groups, options):
            os.write(2, f"pi-conformance: {line}\n".encode())
        remove_groups(groups)

    while True:
        received = signal.sigtimedwait(watched, _POLL_S)
        if (received is not None and received.si_signo != signal.SIGCHLD) or os.getppid() != grader:
            end()
            os._exit(128 + signal.SIGTERM)
        for pid, status in reap():
            if pid == program:
                end()
                exit_like(status)


if __name__ == "__main__":
    main()
