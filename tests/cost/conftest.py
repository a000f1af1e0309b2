"""Hermetic prices: never read a developer's ~/.cache/gpucloud/prices.json."""

import os

import pytest

from gpucloud.catalog import get_catalog

os.environ["GPUCLOUD_PRICE_CACHE"] = "off"


@pytest.fixture(autouse=True)
def _shipped_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", "off")
    get_catalog.cache_clear()
