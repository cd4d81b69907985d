"""Several processes, one mesh (runtime/distributed/multihost.py): real ``python -m runtime.server``
processes on 127.0.0.1, each with its own emulated CPU devices, joined by ``jax.distributed`` (gloo
collectives), checked against one device in this process.

The end-to-end jobs send requests one at a time, and the single-device reference serves each prompt
alone too: the same bucket for every step on both sides, so greedy tokens must be equal (the sharded
step only reorders float32 sums: tests/runtime/distributed/test_sharding.py's tolerances).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from runtime.distributed import multihost
from runtime.distributed.multihost import Leader, MultiHost, ProcessLost
from tests.support.gateway_server import free_port
from tests.support.processes import ROOT, ServerProcess, engine_flags
from tests.support.tiny_gguf import write_tiny_llama

LIMITS = dict(max_num_seqs=4, max_num_batched_tokens=32, max_model_len=256, kv_cache_mb=1)
SMOL_LIMITS = dict(max_num_seqs=2, max_num_batched_tokens=32, max_model_len=256, kv_cache_mb=8)
PROMPTS = ["hello there", "in the beginning was the", "a b c d e f g"]
MAX_TOKENS = [12, 9, 6]


# ---------------------------------------------------------------- units: flags, wire, watchdog


def test_flags_and_environment():
    assert MultiHost.from_flags(None, None, None, environ={}) is None  # one process
    mh = MultiHost.from_flags("h:1", 2, 1, environ={})
    assert (mh.coordinator, mh.num_processes, mh.process_id) == ("h:1", 2, 1)
    env = {"JAX_COORDINATOR_ADDRESS": "c:9", "JAX_NUM_PROCESSES": "4", "JAX_PROCESS_ID": "3"}
    assert MultiHost.from_flags(None, None, None, environ=env).process_id == 3
    assert MultiHost.from_flags(None, None, 0, environ=env).process_id == 0  # a flag wins
    with pytest.raises(ValueError, match="all three"):
        MultiHost.from_flags("h:1", 2, None, environ={})
    with pytest.raises(ValueError, match=r"process-id must be in \[0, 2\)"):
        MultiHost.from_flags("h:1", 2, 2, environ={})
    with pytest.raises(ValueError, match="HOST:PORT"):
        MultiHost.from_flags("h", 2, 0, environ={})
    assert MultiHost.from_flags(None, None, None, auto=True, environ={}).auto


def test_step_inputs_survive_the_wire():
    from runtime.worker.attention import AttentionMetadata
    from runtime.worker.model_runner import StepInputs
    from runtime.worker.sampling import SamplingArrays

    rng = np.random.default_rng(0)
    md = AttentionMetadata(*(rng.integers(0, 9, n).astype(np.int32) for n in (16, 2, 2, 3, 1)))
    sa = SamplingArrays.neutral(2, 300)._replace(temperature=np.array([0.5, 0], np.float32))
    inputs = StepInputs(np.arange(16, dtype=np.int32), np.arange(16, dtype=np.int32) + 3, md, np.array([4, 9]), sa)
    op, arrays = multihost.unpack(multihost.pack("step", multihost.flatten_inputs(inputs)))
    back = multihost.unflatten_inputs(inputs, arrays)
    assert op == "step"
    import jax

    for a, b in zip(jax.tree_util.tree_leaves(inputs), jax.tree_util.tree_leaves(back), strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert back.sampling.temperature[0] == np.float32(0.5)


class FakeClient:
    """The coordination service's key-value store and live set, in memory."""

    def __init__(self, n: int):
        self.store: dict[str, bytes | str] = {f"{multihost.KEY}/host/{i}": f"host{i}" for i in range(n)}
        self.live = set(range(n))

    def key_value_set_bytes(self, k, v):
        self.store[k] = v

    key_value_set = key_value_set_bytes

    def key_value_delete(self, k):
        self.store.pop(k, None)

    def key_value_try_get(self, k):
        return self.store[k]

    def get_live_nodes(self, ids):
        return {i: 0 for i in ids if i in self.live}


def wait_for(event: threading.Event, what: str, timeout: float = 30) -> None:
    assert event.wait(timeout), what  # a bound on a hang, not a timing


def test_watchdog_names_a_process_that_leaves():
    client = FakeClient(3)
    leader = Leader(MultiHost("h:1", 3, 0, heartbeat_timeout_s=1), client, num_processes=3)
    seen, got = [], threading.Event()
    leader.watch(lambda exc: (seen.append(exc), got.set()))
    client.live.discard(2)
    wait_for(got, "the watchdog never reported the missing process")
    leader.stop()
    assert len(seen) == 1 and isinstance(seen[0], ProcessLost)
    assert "process 2 (host2) of 3 left the job" in str(seen[0])
    with pytest.raises(ProcessLost):  # nothing more is published
        leader.publish("step", {})


def test_a_failed_step_is_a_lost_process_and_old_ops_are_deleted():
    client = FakeClient(2)
    leader = Leader(MultiHost("h:1", 2, 0, heartbeat_timeout_s=1), client, num_processes=2)
    leader.publish("prime", {"T": np.array(16), "S": np.array(1)})
    leader.publish("prime", {"T": np.array(16), "S": np.array(1)})
    assert [k for k in client.store if "/op/" in k] == [f"{multihost.KEY}/op/1"]

    def broken():
        client.live.discard(1)  # the peer died: its gloo connection closed
        raise RuntimeError("Gloo all-reduce failed: Connection closed by peer")

    with pytest.raises(ProcessLost, match=r"process 1 \(host1\) of 2 left the job; the step failed: RuntimeError"):
        leader.running(broken)
    assert leader.lost is not None


def test_a_step_past_its_deadline_stops_serving():
    client = FakeClient(2)
    leader = Leader(MultiHost("h:1", 2, 0, step_timeout_s=0.2), client, num_processes=2)
    got = threading.Event()
    leader.watch(lambda exc: got.set())
    release = threading.Event()
    worker = threading.Thread(target=leader.running, args=(release.wait, 30), daemon=True)
    worker.start()
    wait_for(got, "a stuck step was never reported")
    release.set()
    leader.stop()
    assert "a step has not finished in" in str(leader.lost)


# ---------------------------------------------------------------- real processes


class Job:
    """``n`` ``python -m runtime.server`` processes with ``devices`` CPU devices each, joined on a free
    loopback port; process 0 serves HTTP (a ``ServerProcess``), the others follow."""

    def __init__(self, model: str, n: int, devices: int, tp: int, *, gguf=None, limits=LIMITS, flags=()):
        self.coordinator = f"127.0.0.1:{free_port()}"
        args = ["-m", "runtime.server", "--model", model, "--tensor-parallel", str(tp), *engine_flags(**limits)]
        args += ["--gguf", str(gguf)] if gguf else []
        args += ["--coordinator", self.coordinator, "--num-processes", str(n), *flags]
        self.env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}"}
        self.args = args
        self.n = n
        self.followers: list[tuple[subprocess.Popen, Path]] = []
        self.leader = ServerProcess([*args, "--process-id", "0"], name=f"{model}-p0", env=self.env, ready_timeout=400)

    def __enter__(self) -> Job:
        for i in range(1, self.n):
            log = Path(tempfile.mkstemp(prefix=f"follower{i}-", suffix=".log")[1])
            cmd = [sys.executable, *self.args, "--process-id", str(i), "--port", str(free_port())]
            proc = subprocess.Popen(
                cmd, cwd=ROOT, env=self.env, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True
            )
            self.followers.append((proc, log))
        try:
            self.leader.start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def follower(self, i: int) -> subprocess.Popen:
        return self.followers[i - 1][0]

    def logs(self) -> str:
        tails = [f"process 0:\n{self.leader.log_tail(150)}"]
        for i, (_, log) in enumerate(self.followers, 1):
            tails.append(f"process {i}:\n" + "\n".join(log.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(tails)

    def __exit__(self, *exc) -> None:
        self.leader.stop()
        for proc, log in self.followers:
            try:
                os.killpg(proc.pid, signal.SIGCONT)
                proc.wait(30)  # the leader's stop reaches them
            except (subprocess.TimeoutExpired, ProcessLookupError):
                pass
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
            log.unlink(missing_ok=True)
        self.leader.log_path.unlink(missing_ok=True)


def post(url: str, path: str, body: dict, timeout: float = 120):
    req = urllib.request.Request(
        url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def generate(url: str, ids: list[int], max_tokens: int) -> list[int]:
    params = {"max_tokens": max_tokens, "temperature": 0.0, "ignore_eos": True}
    status, body = post(url, "/v1/generate", {"prompt_ids": ids, "params": params})
    assert status == 200, body
    lines = [json.loads(line) for line in body.splitlines()]
    assert lines[-1]["finished"], lines[-1]
    return [t for line in lines for t in line["token_ids"]]


def single_device_tokens(model: str, gguf, limits: dict) -> tuple[list[list[int]], list[list[int]]]:
    """(prompt ids, greedy tokens) per prompt from one device in this process, each prompt served alone."""
    from runtime.api import EngineConfig, SamplingParams
    from runtime.engine.llm_engine import LLMEngine

    engine = LLMEngine(
        EngineConfig(
            model=model,
            gguf_path=str(gguf) if gguf else None,
            max_num_seqs=limits["max_num_seqs"],
            max_num_batched_tokens=limits["max_num_batched_tokens"],
            max_model_len=limits["max_model_len"],
            kv_cache_bytes=int(limits["kv_cache_mb"] * 2**20),
        )
    )
    ids = [engine.encode(p) for p in PROMPTS]
    tokens = []
    for prompt, n in zip(ids, MAX_TOKENS, strict=True):
        (out,) = engine.generate([prompt], [SamplingParams(max_tokens=n, temperature=0.0, ignore_eos=True)])
        tokens.append(out.token_ids)
    return ids, tokens


def assert_job_equals_single_device(job: Job, ids, want) -> None:
    try:
        got = [generate(job.leader.url, p, n) for p, n in zip(ids, MAX_TOKENS, strict=True)]
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{job.logs()}") from None
    assert got == want, job.logs()
    assert all(len(t) == n for t, n in zip(got, MAX_TOKENS, strict=True))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny_llama(tmp_path_factory.mktemp("tiny_mh")).path


@pytest.fixture(scope="module")
def tiny8(tmp_path_factory):
    # 8 query heads (head_dim 8), 2 kv heads repeated to 8: splits over 4 processes x 2 devices.
    return write_tiny_llama(tmp_path_factory.mktemp("tiny_mh8"), heads=8).path


@pytest.mark.slow
def test_two_processes_tp4_equal_one_device(tiny):
    ids, want = single_device_tokens("tiny", tiny, LIMITS)
    with Job("tiny", n=2, devices=2, tp=4, gguf=tiny) as job:
        assert_job_equals_single_device(job, ids, want)
    for proc, _ in job.followers:  # the leader's stop reached the follower: a clean exit
        assert proc.returncode == 0


@pytest.mark.slow
def test_four_processes_tp8_equal_one_device(tiny8):
    ids, want = single_device_tokens("tiny8", tiny8, LIMITS)
    with Job("tiny8", n=4, devices=2, tp=8, gguf=tiny8) as job:
        assert_job_equals_single_device(job, ids, want)


@pytest.mark.slow
def test_smollm2_over_two_processes_equals_one_device():
    # SmolLM2's 9 heads and 3 kv heads split 3 ways: two devices of process 0 and one of process 1.
    ids, want = single_device_tokens("smollm2-135m", None, SMOL_LIMITS)
    with Job("smollm2-135m", n=2, devices=2, tp=3, limits=SMOL_LIMITS) as job:
        assert_job_equals_single_device(job, ids, want)


def lost_within(job: Job, started: float, heartbeat_s: int) -> float:
    """Seconds from ``started``; the bound is the mechanism's: the coordination service marks a silent
    process dead after ``heartbeat_s``, the watchdog polls every POLL_S, then the step's own naming
    wait; three heartbeats and ten seconds of slack for a loaded two-core machine."""
    elapsed = time.monotonic() - started
    assert elapsed < 3 * heartbeat_s + 10, f"took {elapsed:.1f} s\n{job.logs()}"
    return elapsed


def assert_stopped_for_good(job: Job, process: int) -> None:
    status, body = post(job.leader.url, "/v1/generate", {"prompt_ids": [1, 2, 3], "params": {"max_tokens": 2}})
    err = json.loads(body)["error"]
    assert status == 503 and err["code"] == "process_lost" and f"process {process} (" in err["message"]
    with pytest.raises(urllib.error.HTTPError) as ready:
        urllib.request.urlopen(job.leader.url + "/readyz", timeout=5)
    assert ready.value.code == 503 and f"process {process}" in json.loads(ready.value.read())["error"]
    with urllib.request.urlopen(job.leader.url + "/healthz", timeout=5) as r:  # the server itself is up
        assert r.status == 200


@pytest.mark.slow
def test_a_killed_process_ends_the_stream_with_a_503_naming_it(tiny):
    heartbeat = 10  # the default: a loaded two-core CI machine must not miss one by accident
    with Job("tiny", n=2, devices=2, tp=4, gguf=tiny, flags=("--heartbeat-timeout", str(heartbeat))) as job:
        params = {"max_tokens": 240, "temperature": 0.0, "ignore_eos": True}
        req = urllib.request.Request(
            job.leader.url + "/v1/generate",
            data=json.dumps({"prompt_ids": [5, 6, 7], "params": params}).encode(),
            headers={"Content-Type": "application/json"},
        )
        lines = []
        with urllib.request.urlopen(req, timeout=120) as stream:
            lines.append(json.loads(stream.readline()))  # tokens are flowing
            os.killpg(job.follower(1).pid, signal.SIGKILL)
            killed = time.monotonic()
            lines += [json.loads(line) for line in stream]
        lost_within(job, killed, heartbeat)
        last = lines[-1]
        assert "error" in last, last  # the stream ended on an error line, not on a finished output
        assert last["error"]["code"] == "process_lost" and "process 1 (" in last["error"]["message"]
        assert sum(len(x.get("token_ids", ())) for x in lines) < 240
        assert_stopped_for_good(job, 1)


@pytest.mark.slow
def test_a_stalled_process_is_a_503_naming_it_never_a_hang(tiny):
    heartbeat = 10  # the default: a loaded two-core CI machine must not miss one by accident
    with Job("tiny", n=2, devices=2, tp=4, gguf=tiny, flags=("--heartbeat-timeout", str(heartbeat))) as job:
        generate(job.leader.url, [5, 6, 7], 2)
        os.killpg(job.follower(1).pid, signal.SIGSTOP)  # alive, but answering nothing (a hung host)
        stopped = time.monotonic()
        status, body = post(job.leader.url, "/v1/generate", {"prompt_ids": [5, 6, 7], "params": {"max_tokens": 4}})
        lost_within(job, stopped, heartbeat)
        assert status == 503 and json.loads(body)["error"]["code"] == "process_lost", body
        assert_stopped_for_good(job, 1)


@pytest.mark.slow
def test_a_mesh_that_leaves_a_process_out_is_refused(tiny):
    # --tensor-parallel 2 over 2 processes x 2 devices would be process 0's devices only: both refuse
    # before any weight loads, saying why (exit status 2, as for any bad flag).
    job = Job("tiny", n=2, devices=2, tp=2, gguf=tiny)
    procs = [
        subprocess.Popen(
            [sys.executable, *job.args, "--process-id", str(i), "--port", str(free_port())],
            cwd=ROOT,
            env=job.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 2, out[-2000:]
        assert "none of them on process(es) [1]: every process must hold part of the mesh" in out
