"""Suite-wide fixtures: hermetic prices (never a developer's ~/.cache/gpucloud/prices.json) and a moto server
on loopback for boto3 code."""

import atexit
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator

import pytest

from gpucloud.catalog import get_catalog

os.environ["GPUCLOUD_PRICE_CACHE"] = "off"
# No test downloads helm or kubectl (gpucloud/tools.py fetches them on first use): a missing binary stays missing.
os.environ["GPUCLOUD_NO_DOWNLOAD"] = "1"
# Rendered charts go to a cache of this test session, never a developer's ~/.cache/gpucloud/helm.
os.environ["GPUCLOUD_CACHE_DIR"] = tempfile.mkdtemp(prefix="gpucloud-test-cache-")
atexit.register(shutil.rmtree, os.environ["GPUCLOUD_CACHE_DIR"], True)


@pytest.fixture(autouse=True)
def _shipped_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", "off")
    get_catalog.cache_clear()


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """A real moto server on loopback; boto3 reaches it over HTTP through AWS_ENDPOINT_URL."""
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, moto_endpoint: str) -> str:
    for var in (
        "AWS_PROFILE",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    return moto_endpoint
