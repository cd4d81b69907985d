"""Stopping a server from the shell, shared by the gateway (``gateway.lifecycle``) and the runtime server
(``runtime.serving.server``); no JAX here, so the gateway imports it without loading the engine.

``take_terminal``: ``make serve`` / ``make serve-large`` set JAXSERVE_TAKE_TERMINAL=1. Ctrl-C sends SIGINT
to the terminal's whole foreground job, make included, and a make that gets SIGINT exits 130 whatever the
server does. So when stdin is the terminal of the foreground job this process is in, it moves to a process
group of its own and takes the terminal (handed back at exit): Ctrl-C reaches the server alone, and make
exits with the server's status. Without a terminal it does nothing.

``REPEAT_S``: the same signal again this soon is the first one delivered twice (make forwards a process
group's SIGTERM to its child), not a second Ctrl-C.

``exit_now``: log why, hand the terminal back, end the process at once (no wait for a compile thread).
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import sys

REPEAT_S = 1.0
_handback: list = []  # [fd, the job's process group] once take_terminal took the terminal


def take_terminal(log: logging.Logger | None = None) -> None:
    if os.environ.pop("JAXSERVE_TAKE_TERMINAL", "") != "1":
        return
    try:
        fd = sys.stdin.fileno()
        job = os.getpgrp()
        if not os.isatty(fd) or os.tcgetpgrp(fd) != job or job == os.getpid():
            return  # no terminal, a background job, or already a job of its own (run from a shell)
        os.setpgid(0, 0)
        _give_terminal(fd, os.getpgrp())
    except OSError:  # stdin is not this session's terminal (a detached process)
        return
    _handback[:] = [fd, job]
    atexit.register(_give_terminal, fd, job)
    if log is not None:
        log.debug("process group %d has the terminal (Ctrl-C reaches this server alone)", os.getpgrp())


def _give_terminal(fd: int, pgrp: int) -> None:
    old = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # a background group's tcsetpgrp would stop us
    try:
        os.tcsetpgrp(fd, pgrp)
    except OSError:
        pass
    finally:
        signal.signal(signal.SIGTTOU, old)


def exit_now(log: logging.Logger, status: int, why: str, *args) -> None:
    """Log ``why`` and end the process at once with ``status``, the terminal handed back first: no close
    waits, nor the interpreter's exit (which would join a compile thread)."""
    log.log(logging.WARNING if status else logging.INFO, why, *args)
    logging.shutdown()
    if _handback:
        _give_terminal(*_handback)
    os._exit(status)
