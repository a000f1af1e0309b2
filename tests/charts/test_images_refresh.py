"""`gpucloud images refresh` against a fake OCI registry on 127.0.0.1: Bearer token challenge, an index digest from
the Docker-Content-Digest header, a digest computed from the body, a 404 tag and a 5xx (exit 6, lock unchanged)."""

from __future__ import annotations

import argparse
import hashlib
import json
import threading
from collections.abc import Iterator
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gpucloud.charts import images
from gpucloud.charts.images_refresh import refresh
from gpucloud.charts.registry import INDEX_TYPES, Client, RegistryUnavailable, TagNotFound, registry_and_name
from gpucloud.cli.errors import EXIT_AWS_UNAVAILABLE, CliError
from gpucloud.cli.images import run_refresh

INDEX_BODY = json.dumps({"schemaVersion": 2, "mediaType": INDEX_TYPES[0], "manifests": []}).encode()
INDEX_DIGEST = "sha256:" + hashlib.sha256(INDEX_BODY).hexdigest()
SINGLE_BODY = b'{"schemaVersion": 2, "config": {}}'
SINGLE_DIGEST = "sha256:" + hashlib.sha256(SINGLE_BODY).hexdigest()
TOKEN = "fake-pull-token"


class FakeRegistry(BaseHTTPRequestHandler):
    seen: list[tuple[str, str, str | None]] = []

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _reply(self, status: int, headers: dict[str, str], body: bytes = b"") -> None:
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _handle(self) -> None:
        self.seen.append((self.command, self.path, self.headers.get("Accept")))
        host = f"http://127.0.0.1:{self.server.server_address[1]}"  # type: ignore[index]
        if self.path.startswith("/token"):
            assert "scope=repository%3Ateam%2Fapp%3Apull" in self.path or "scope=" in self.path
            self._reply(200, {"Content-Type": "application/json"}, json.dumps({"token": TOKEN}).encode())
            return
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            realm = f'Bearer realm="{host}/token",service="fake",scope="repository:team/app:pull"'
            self._reply(401, {"WWW-Authenticate": realm})
            return
        tag = self.path.rsplit("/", 1)[-1]
        if tag == "v1":
            self._reply(200, {"Content-Type": INDEX_TYPES[0], "Docker-Content-Digest": INDEX_DIGEST}, INDEX_BODY)
        elif tag == "nohead":  # no digest header: the client GETs and hashes the body
            self._reply(200, {"Content-Type": "application/vnd.oci.image.manifest.v1+json"}, SINGLE_BODY)
        elif tag == "missing":
            self._reply(404, {"Content-Type": "application/json"}, b'{"errors":[{"code":"MANIFEST_UNKNOWN"}]}')
        else:
            self._reply(503, {})

    do_HEAD = _handle
    do_GET = _handle


@pytest.fixture()
def registry() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeRegistry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    FakeRegistry.seen = []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _lock(tmp_path: Path, *tags: str) -> Path:
    entries = [
        {
            "repository": "fake.example/team/app",
            "tag": t,
            "digest": None,
            "index": None,
            "source": None,
            "unpinned": "not resolved yet",
            "render": {"form": "ref"},
            "used_by": "test",
        }
        for t in tags
    ]
    entries.append({"repository": "602401143452.dkr.ecr.{region}.amazonaws.com/eks/x", "tag": "v1", "digest": None,
                    "unpinned": "private", "render": None})  # fmt: skip
    path = tmp_path / "images.json"
    path.write_text(json.dumps({"schema": 1, "images": entries}, indent=2) + "\n")
    return path


def _client(base: str) -> Client:
    return Client(base_urls={"fake.example": base}, timeout=5)


def test_token_challenge_then_index_digest_written_with_its_source(registry: str, tmp_path: Path) -> None:
    lock = _lock(tmp_path, "v1", "nohead")
    result = refresh(lock, lock, _client(registry), today=date(2026, 12, 1))
    assert [c["new"] for c in result["changed"]] == [INDEX_DIGEST, SINGLE_DIGEST]
    assert result["skipped"][0]["image"].startswith("602401143452.dkr.ecr.{region}")
    pins = images.load(str(lock))
    assert pins[0].ref == f"fake.example/team/app:v1@{INDEX_DIGEST}"
    assert pins[0].index is True and pins[1].index is False
    assert pins[0].unpinned is None and "resolved by `gpucloud images refresh` on 2026-12-01" in str(pins[0].source)
    # The first request was refused with a challenge, the token fetched, the request repeated with it; the Accept
    # header asks for the OCI index and the Docker manifest list first.
    assert FakeRegistry.seen[0][0] == "HEAD" and FakeRegistry.seen[1][1].startswith("/token")
    accept = str(FakeRegistry.seen[0][2])
    assert accept.startswith("application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution")
    # A second refresh changes nothing and does not rewrite the file.
    before = lock.stat().st_mtime_ns
    again = refresh(lock, lock, _client(registry))
    assert again["changed"] == [] and again["unchanged"] == 2 and lock.stat().st_mtime_ns == before


def test_a_404_tag_fails_naming_it_and_leaves_the_lock(registry: str, tmp_path: Path) -> None:
    lock = _lock(tmp_path, "v1", "missing")
    before = lock.read_bytes()
    with pytest.raises(TagNotFound, match=r"fake.example/team/app:missing: the registry has no such tag \(HTTP 404\)"):
        refresh(lock, lock, _client(registry))
    assert lock.read_bytes() == before


def test_a_5xx_exits_6_with_one_message_and_leaves_the_lock(registry: str, tmp_path: Path) -> None:
    lock = _lock(tmp_path, "v1", "broken")
    before = lock.read_bytes()
    args = argparse.Namespace(lock=str(lock), out=None, only=None, format="text")
    with pytest.raises(CliError) as info:
        run_refresh(args, client=_client(registry))
    assert info.value.exit_code == EXIT_AWS_UNAVAILABLE == 6
    assert str(info.value) == (
        "registry unavailable: fake.example/team/app:broken: HTTP 503 from fake.example; "
        "the lock was not changed, run again later"
    )
    assert lock.read_bytes() == before


def test_a_refused_connection_is_unavailable(tmp_path: Path) -> None:
    lock = _lock(tmp_path, "v1")
    with pytest.raises(RegistryUnavailable, match=r"fake\.example/team/app:v1"):
        refresh(lock, lock, Client(base_urls={"fake.example": "http://127.0.0.1:9"}, timeout=2))


def test_the_registry_override_is_only_a_constructor_argument() -> None:
    # Nothing in configuration or the environment can point a real refresh elsewhere: the CLI builds Client().
    assert Client()._base("ghcr.io") == "https://ghcr.io"
    assert registry_and_name("docker.io/grafana/grafana") == ("registry-1.docker.io", "grafana/grafana")
    assert registry_and_name("mpioperator/mpi-operator") == ("registry-1.docker.io", "mpioperator/mpi-operator")
    assert registry_and_name("python") == ("registry-1.docker.io", "library/python")
    assert registry_and_name("localhost:5000/app") == ("localhost:5000", "app")


def test_the_cli_prints_one_message_and_exits_6_without_a_traceback(
    registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpucloud.charts import registry as registry_mod
    from gpucloud.cli import main

    # The CLI builds a plain Client(); the test swaps the class for one bound to the fake registry.
    monkeypatch.setattr(registry_mod, "Client", lambda: _client(registry))
    lock = _lock(tmp_path, "broken")
    assert main(["images", "refresh", "--lock", str(lock)]) == 6
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("gpucloud: error: registry unavailable: fake.example/team/app:broken: HTTP 503")
    (tmp_path / "ok").mkdir()
    lock_ok = _lock(tmp_path / "ok", "v1")
    assert main(["images", "refresh", "--lock", str(lock_ok), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [c["new"] for c in out["changed"]] == [INDEX_DIGEST]
    assert main(["images", "refresh", "--lock", str(_lock(tmp_path, "missing"))]) == 2
    assert "has no such tag (HTTP 404); fix the tag in" in capsys.readouterr().err
