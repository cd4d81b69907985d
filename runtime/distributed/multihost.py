"""One model over several processes (hosts): JAX's multi-controller runtime, process 0 leading.

    host A: python -m runtime.server --model M --tensor-parallel 8 \\
                --coordinator hostA:8476 --num-processes 2 --process-id 0      # HTTP + scheduler
    host B: python -m runtime.server --model M --tensor-parallel 8 \\
                --coordinator hostA:8476 --num-processes 2 --process-id 1      # a follower

``jax.distributed.initialize`` joins the processes (flags, else the environment JAX and cluster managers
set: ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``, ``JAX_PROCESS_ID``; ``--distributed auto`` lets
JAX detect a TPU pod slice or a SLURM job itself). After that ``jax.devices()`` lists every process's
devices, ``TensorParallel`` builds its ``("data", "model")`` mesh over them with the same partition rules as
on one host, and XLA's SPMD partitioner puts the collectives into the one compiled step that every process
runs (gloo between CPU processes, NCCL / ICI on accelerators).

Who decides what: process 0 (the leader) owns HTTP, the scheduler and the sampler's host side, exactly as a
single-process server. Every device computation on the shared arrays (the step, a sampler-state row filled
for a new request, priming a program) must run in every process in the same order, so the leader's
``ModelRunner`` carries a ``Leader`` (its ``mirror``) that publishes each one's host inputs before running
it, and the followers (``follow``) run the same call on the same inputs. Nothing else crosses.

How the inputs travel, and why: through the coordination service's key-value store (the gRPC service
``jax.distributed`` already runs in process 0 to join the processes), one key per step, an ``.npz`` of the
step's NumPy arrays. Considered and not taken:

- a device collective (``multihost_utils.broadcast_one_to_all``): every process must know the arrays'
  shapes before the collective, so a step would need two (a header, then the bucket's arrays), and an
  idle follower would wait inside a gloo collective, which has no timeout, for as long as nobody sends a
  request;
- the same deterministic scheduler in every process: every HTTP request (and every abort, and the
  moment it arrived between steps) would have to reach every process in the same order first, which is
  the same broadcast with more to go wrong.

The store's blocking read has a timeout, so an idle follower waits in a loop it controls. Cost: one put
and one get per step per follower, a loopback gRPC round trip each (not measured apart from the step).

Failure, bounded: a follower that dies closes its gloo connections, and the leader's step fails at once;
one that stalls (SIGSTOP, a hung host) stops sending heartbeats and the coordination service marks it
dead after ``heartbeat_timeout_s``. The leader's watchdog polls the live set (and a step deadline,
``step_timeout_s``) and, either way, fails every request in flight and every later one with a 503 that
names the process and its host, and logs it (``ProcessLost``). It never hangs a client: a step stuck in a
collective stays stuck on its thread while HTTP answers. ``jax_enable_recoverability`` keeps the leader's
own coordination client alive when a follower goes. A follower whose leader goes exits (the coordination
service lived in the leader; JAX's client ends the process).
"""

from __future__ import annotations

import io
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

log = logging.getLogger("runtime.multihost")

KEY = "jaxserve"  # prefix of every key this module writes in the coordination store
POLL_S = 0.5  # how often the watchdog reads the live set; a follower's read timeout between checks


class ProcessLost(RuntimeError):
    """A process of the mesh is gone or stuck: serving over it has stopped (HTTP 503, code ``process_lost``)."""


@dataclass(frozen=True)
class MultiHost:
    """Where this process stands in the job. ``coordinator`` None with ``auto``: JAX detects the cluster."""

    coordinator: str | None
    num_processes: int | None
    process_id: int | None
    auto: bool = False
    heartbeat_timeout_s: int = 10
    step_timeout_s: float = 120.0

    @classmethod
    def from_flags(
        cls,
        coordinator: str | None,
        num_processes: int | None,
        process_id: int | None,
        *,
        auto: bool = False,
        heartbeat_timeout_s: int = 10,
        step_timeout_s: float = 120.0,
        environ=os.environ,
    ) -> MultiHost | None:
        """None for a single-process server; flags win over ``JAX_COORDINATOR_ADDRESS`` /
        ``JAX_NUM_PROCESSES`` / ``JAX_PROCESS_ID``. Raises ValueError for an incomplete or impossible set."""
        coordinator = coordinator or environ.get("JAX_COORDINATOR_ADDRESS")
        if num_processes is None and environ.get("JAX_NUM_PROCESSES"):
            num_processes = int(environ["JAX_NUM_PROCESSES"])
        if process_id is None and environ.get("JAX_PROCESS_ID"):
            process_id = int(environ["JAX_PROCESS_ID"])
        if heartbeat_timeout_s < 1 or step_timeout_s <= 0:
            raise ValueError("--heartbeat-timeout must be >= 1 s and --step-timeout > 0")
        given = [x is not None for x in (coordinator, num_processes, process_id)]
        if auto:
            return cls(coordinator, num_processes, process_id, True, heartbeat_timeout_s, step_timeout_s)
        if not any(given):
            return None
        if not all(given):
            raise ValueError(
                "several processes need all three of --coordinator HOST:PORT, --num-processes N and "
                "--process-id I (or JAX_COORDINATOR_ADDRESS / JAX_NUM_PROCESSES / JAX_PROCESS_ID; "
                "--distributed auto on a TPU pod slice or under SLURM)"
            )
        if num_processes < 1 or not 0 <= process_id < num_processes:
            raise ValueError(f"--process-id must be in [0, {num_processes}); got {process_id}")
        if ":" not in coordinator:
            raise ValueError(f"--coordinator must be HOST:PORT; got {coordinator!r}")
        return cls(coordinator, num_processes, process_id, False, heartbeat_timeout_s, step_timeout_s)


def initialize(mh: MultiHost) -> None:
    """Join the job (before the first JAX computation). On CPU the collectives go over gloo."""
    import jax

    for option, value in (
        ("jax_cpu_collectives_implementation", "gloo"),  # CPU only; accelerators use their own
        ("jax_enable_recoverability", True),  # the leader outlives a follower to report it
    ):
        try:
            jax.config.update(option, value)
        except AttributeError:  # a JAX that has no such option (gloo became the CPU default): nothing to set
            log.info("this JAX has no %s option", option)
    kwargs = {}
    if not mh.auto or mh.coordinator:
        kwargs = dict(coordinator_address=mh.coordinator, num_processes=mh.num_processes, process_id=mh.process_id)
    jax.distributed.initialize(**kwargs, heartbeat_timeout_seconds=mh.heartbeat_timeout_s)
    client = _client()
    me = jax.process_index()
    client.key_value_set(f"{KEY}/host/{me}", f"{socket.gethostname()} (pid {os.getpid()})")
    log.info(
        "process %d of %d joined: %d local devices, %d in all",
        me,
        jax.process_count(),
        jax.local_device_count(),
        jax.device_count(),
    )


def leave_together(timeout_s: float = 20.0, linger_s: float = 2.0) -> None:
    """Before a joined process exits on an error every process meets (a refused mesh): wait until all of them
    have reached it, and process 0, which hosts the coordination service, leaves last. Without this, process 0
    could exit while another was still talking to the service, and that one then died of the lost connection
    ("Connection reset by peer", an abort) instead of refusing with its own message and status. A process that
    never comes (an error of this process alone) costs ``timeout_s``, then this one leaves anyway."""
    import jax

    try:
        _client().wait_at_barrier(f"{KEY}/leave", int(timeout_s * 1000))
    except Exception as exc:  # noqa: BLE001 - leaving regardless; the others will report the loss
        log.warning("not every process reached the exit barrier: %s", str(exc)[:300])
    if jax.process_index() == 0:
        time.sleep(linger_s)  # the others exit first; the service goes with this process


def _client():
    from jax._src import distributed

    client = distributed.global_state.client
    if client is None:
        raise RuntimeError("jax.distributed is not initialized")
    return client


def process_index() -> int:
    import jax

    return jax.process_index()


# ---------------------------------------------------------------- the wire: named NumPy arrays


def pack(op: str, arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, __op__=np.array(op), **{k: np.asarray(v) for k, v in arrays.items()})
    return buf.getvalue()


def unpack(data: bytes) -> tuple[str, dict[str, np.ndarray]]:
    with np.load(io.BytesIO(data), allow_pickle=False) as z:  # arrays only: nothing executes on load
        arrays = {k: z[k] for k in z.files}
    return str(arrays.pop("__op__")), arrays


def flatten_inputs(inputs) -> dict[str, np.ndarray]:
    import jax

    return {f"in{i}": np.asarray(x) for i, x in enumerate(jax.tree_util.tree_leaves(inputs))}


def unflatten_inputs(template, arrays: dict[str, np.ndarray]):
    """The step inputs from ``flatten_inputs``' arrays, on ``template``'s structure (a ``StepInputs``)."""
    import jax

    treedef = jax.tree_util.tree_structure(template)
    return jax.tree_util.tree_unflatten(treedef, [arrays[f"in{i}"] for i in range(treedef.num_leaves)])


# ---------------------------------------------------------------- process 0


class Leader:
    """Process 0's side: the runner's ``mirror`` (publishes every shared device call) and the watchdog."""

    def __init__(self, mh: MultiHost, client=None, num_processes: int | None = None):
        import jax

        self.mh = mh
        self.client = client or _client()
        self.n = num_processes or jax.process_count()
        self.seq = 0
        self._rows: list[dict[str, np.ndarray]] = []  # sampler-state rows filled since the last step
        self._step_started: float | None = None
        self._lost: ProcessLost | None = None
        self._on_lost: list[Callable[[ProcessLost], None]] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._watchdog: threading.Thread | None = None

    # ---- what the runner calls

    def publish(self, op: str, arrays: dict[str, np.ndarray]) -> None:
        if self._lost is not None:
            raise self._lost
        self.client.key_value_set_bytes(f"{KEY}/op/{self.seq}", pack(op, arrays))
        if self.seq:  # every process has read the one before: each op ends in a collective they all joined
            self.client.key_value_delete(f"{KEY}/op/{self.seq - 1}")
        self.seq += 1

    def state_row(self, row, ids, kinds, values) -> None:
        """A sampler-state row the leader filled: the followers fill it before the next step."""
        self._rows.append(dict(row=np.asarray(row), ids=ids, kinds=kinds, values=values))

    def _with_rows(self, arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        for i, r in enumerate(self._rows):
            arrays.update({f"row{i}_{k}": v for k, v in r.items()})
        arrays["rows"] = np.array(len(self._rows))
        self._rows = []
        return arrays

    def step(self, inputs, logprobs: bool) -> None:
        self.publish("step", self._with_rows({**flatten_inputs(inputs), "logprobs": np.array(logprobs)}))

    def prime(self, T: int, S: int) -> None:
        self.publish("prime", self._with_rows({"T": np.array(T), "S": np.array(S)}))

    def running(self, fn: Callable, *args):
        """``fn(*args)`` (the step's device calls) under the step deadline; a failure inside it is a lost
        process, named once the coordination service knows which (bounded by the heartbeat timeout)."""
        self._step_started = time.monotonic()
        try:
            return fn(*args)
        except ProcessLost:
            raise
        except Exception as exc:
            if self._lost is None:
                self._fail(self._name_lost(f"the step failed: {type(exc).__name__}: {str(exc)[:200]}"))
            raise self._lost from exc
        finally:
            self._step_started = None

    def stop(self) -> None:
        """Tell the followers to exit (server shutdown), and stop the watchdog."""
        self._stop.set()
        if self._lost is None:
            try:
                self.publish("stop", {})
            except Exception:  # a follower already gone: nothing to tell it
                log.warning("could not tell the followers to stop", exc_info=True)

    # ---- the watchdog

    def watch(self, on_lost: Callable[[ProcessLost], None]) -> None:
        """Call ``on_lost`` (once) when a process leaves the live set or a step outlives ``step_timeout_s``."""
        self._on_lost.append(on_lost)
        if self._lost is not None:
            on_lost(self._lost)
        if self._watchdog is None:
            self._watchdog = threading.Thread(target=self._watch, name="jaxserve-multihost-watchdog", daemon=True)
            self._watchdog.start()

    @property
    def lost(self) -> ProcessLost | None:
        return self._lost

    def _host(self, i: int) -> str:
        try:
            return self.client.key_value_try_get(f"{KEY}/host/{i}")
        except Exception:
            return "host unknown"

    def _missing(self) -> list[int]:
        live = self.client.get_live_nodes(list(range(self.n)))
        return [i for i in range(self.n) if i not in live]

    def _name_lost(self, why: str) -> ProcessLost:
        """Wait (at most the heartbeat timeout and two polls) for the service to say which process is gone."""
        deadline = time.monotonic() + self.mh.heartbeat_timeout_s + 2 * POLL_S
        while True:
            missing = self._missing()
            if missing or time.monotonic() > deadline:
                return self._error(missing, why)
            time.sleep(POLL_S / 2)

    def _error(self, missing: list[int], why: str) -> ProcessLost:
        if missing:
            who = ", ".join(f"process {i} ({self._host(i)})" for i in missing)
            return ProcessLost(f"serving stopped: {who} of {self.n} left the job; {why}")
        return ProcessLost(f"serving stopped: a process of {self.n} stopped answering; {why}")

    def _fail(self, lost: ProcessLost) -> None:
        with self._lock:
            if self._lost is not None:
                return
            self._lost = lost
        log.error("%s", lost)
        for fn in self._on_lost:
            fn(lost)

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            if self._lost is not None:
                return
            try:
                missing = self._missing()
            except Exception as exc:
                self._fail(ProcessLost(f"serving stopped: the coordination service failed: {exc}"))
                return
            started = self._step_started
            if missing:
                self._fail(self._error(missing, f"no heartbeat for {self.mh.heartbeat_timeout_s} s"))
            elif started is not None and time.monotonic() - started > self.mh.step_timeout_s:
                self._fail(self._error([], f"a step has not finished in {self.mh.step_timeout_s:.0f} s"))


def agree_num_blocks(num_blocks: int, timeout_s: float = 600, client=None) -> int:
    """The KV block count every process allocates: the smallest any of them planned (each sizes its
    cache alike on CPU, but an accelerator's free memory can differ by process). Every process calls
    this at the same point of building its engine, after its weights are on the devices."""
    import jax

    client = client or _client()
    client.key_value_set(f"{KEY}/num_blocks/{jax.process_index()}", str(num_blocks))
    every = [
        int(client.blocking_key_value_get(f"{KEY}/num_blocks/{i}", int(timeout_s * 1000)))
        for i in range(jax.process_count())
    ]
    return min(every)


# ---------------------------------------------------------------- processes 1..n-1


def follow(runner, client=None, *, poll_s: float = POLL_S) -> int:
    """Run the leader's device calls on this process's devices until it says stop. Returns the op count;
    raises ``ProcessLost`` when a step fails (another process is gone: the collective broke)."""
    client = client or _client()
    template = runner.host_inputs(1, 1)  # the StepInputs structure the leader flattens
    seq = 0
    while True:
        try:
            data = client.blocking_key_value_get_bytes(f"{KEY}/op/{seq}", int(poll_s * 1000))
        except Exception as exc:  # a timeout: nothing to do yet (DEADLINE_EXCEEDED); anything else is fatal
            if "DEADLINE_EXCEEDED" in str(exc) or "timed out" in str(exc).lower():
                continue
            raise
        op, arrays = unpack(data)
        seq += 1
        if op == "stop":
            log.info("the leader stopped serving: %d ops followed", seq - 1)
            return seq - 1
        for i in range(int(arrays.pop("rows", 0))):
            runner.fill_state_row(*(arrays[f"row{i}_{k}"] for k in ("row", "ids", "kinds", "values")))
        if op not in ("step", "prime"):
            raise RuntimeError(f"unknown op {op!r} from the leader")
        try:
            if op == "step":
                inputs = unflatten_inputs(template, arrays)
                T, S = inputs.tokens.shape[0], inputs.logits_indices.shape[0]
                runner.ensure_compiled(T, S)  # the leader's bucket, compiled the same way (never the jit fallback)
                runner.run(inputs, logprobs=bool(arrays["logprobs"]))
            else:
                T, S = int(arrays["T"]), int(arrays["S"])
                runner.ensure_compiled(T, S)
                runner.prime(T, S)
        except Exception as exc:
            raise ProcessLost(f"step {seq - 1} failed: {type(exc).__name__}: {str(exc)[:2000]}") from exc


def check_mesh(tensor_parallel: int) -> None:
    """Every process must hold part of the ``tensor_parallel`` devices the mesh takes (the first N of
    ``jax.devices()``, process 0's first): a process outside it would have nothing to run."""
    import jax

    devices = jax.devices()
    inside = {d.process_index for d in devices[:tensor_parallel]}
    outside = sorted(set(range(jax.process_count())) - inside)
    if outside:
        raise ValueError(
            f"--tensor-parallel {tensor_parallel} takes the first {tensor_parallel} of the job's {len(devices)} "
            f"devices, none of them on process(es) {outside}: every process must hold part of the mesh "
            f"(raise --tensor-parallel, or start fewer processes)"
        )
