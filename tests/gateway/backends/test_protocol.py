"""The one backend interface: what the gateway asks of a tier, and the three kinds that answer it."""

from __future__ import annotations

from gateway.backends import Backend
from gateway.backends.remote import RemoteBackend
from gateway.backends.replicas import ReplicaSet

MEMBERS = ("name", "ready", "compiling", "max_model_len", "start", "close", "encode", "generate", "stats")


def test_remote_backends_and_replica_sets_are_backends_that_compile_nothing_here():
    remote = RemoteBackend("big", "http://127.0.0.1:9")
    replicas = ReplicaSet.from_urls("big", ["http://127.0.0.1:9", "http://127.0.0.1:10"])
    for backend in (remote, replicas):
        assert isinstance(backend, Backend) and backend.compiling is False and not backend.ready


def test_the_in_process_engine_has_every_member_of_the_interface():
    from runtime.serving.local import LocalEngine  # loads JAX: the class only, no model

    missing = [m for m in MEMBERS if m not in ("name", "ready") and not hasattr(LocalEngine, m)]  # set in __init__
    assert not missing, f"LocalEngine lacks {missing}"
