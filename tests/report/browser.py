"""Headless Chromium (Debian's package) for tests that must see a page the way a browser does."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def chromium() -> str:
    """The browser binary; a skip when absent, a failure when the run requires it (`make test` sets that)."""
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    message = "headless Chromium is not installed (apt-get install chromium; `make test` does it)"
    if os.environ.get("GPUCLOUD_REQUIRE_BROWSER") == "1":
        pytest.fail(message)
    pytest.skip(message)


def dump_dom(page: Path, timeout: float = 90.0) -> str:
    """The DOM after the page's scripts ran, serialised; the browser is killed if it hangs."""
    cmd = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--allow-file-access-from-files",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page.resolve().as_uri(),
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout
