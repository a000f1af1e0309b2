"""The local price cache: where it lives (environment), how a file is read (memo, warnings for corrupt or foreign
files), which entries count as prices, and how a refresh merges into it. Every expected value below is written out
by hand from the file shape documented in gpucloud/prices/cache.py."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from gpucloud.prices import cache as cache_mod
from gpucloud.prices.cache import (
    load_cache,
    region_prices,
    region_service_rates,
    write_cache,
)

SCHEMA = "gpucloud.prices/v1"


def write(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def cache_file(tmp_path: Path, regions: Any, **extra: Any) -> Path:
    return write(tmp_path / "prices.json", {"schema": SCHEMA, "regions": regions, **extra})


# --- location -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["", "off", "  Off  ", "NONE", "0", "False"])
def test_cache_disabled_by_any_off_word_with_case_and_spaces(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", value)
    assert cache_mod.cache_path() is None
    assert load_cache() is None


def test_cache_path_from_the_variable_expands_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", "~/prices/p.json")
    assert cache_mod.cache_path() == tmp_path / "prices" / "p.json"


def test_cache_path_defaults_to_xdg_then_home_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GPUCLOUD_PRICE_CACHE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_mod.cache_path() == tmp_path / "xdg" / "gpucloud" / "prices.json"
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # empty: unset per the XDG spec
    assert cache_mod.cache_path() == tmp_path / "home" / ".cache" / "gpucloud" / "prices.json"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_mod.cache_path() == tmp_path / "home" / ".cache" / "gpucloud" / "prices.json"


def test_load_cache_without_a_path_reads_the_configured_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = cache_file(tmp_path, {"us-east-1": {}})
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(path))
    assert load_cache() == {"schema": SCHEMA, "regions": {"us-east-1": {}}}
    assert load_cache(tmp_path / "absent.json") is None


# --- reading --------------------------------------------------------------------------------------------------------


def test_load_cache_is_memoised_per_file_version(tmp_path: Path) -> None:
    path = cache_file(tmp_path, {})
    first = load_cache(path)
    assert first == {"schema": SCHEMA, "regions": {}}
    assert load_cache(path) is first
    cache_file(tmp_path, {"eu-west-1": {}})  # a longer file: a new size, so a new memo key
    assert load_cache(path) == {"schema": SCHEMA, "regions": {"eu-west-1": {}}}


def test_load_cache_memo_tells_files_of_equal_size_and_time_apart(tmp_path: Path) -> None:
    one = cache_file(tmp_path, {"us-east-1": {}})
    two = write(tmp_path / "other.json", {"schema": SCHEMA, "regions": {"us-west-2": {}}})
    os.utime(one, (1_700_000_000, 1_700_000_000))
    os.utime(two, (1_700_000_000, 1_700_000_000))
    assert one.stat().st_size == two.stat().st_size
    assert load_cache(one) == {"schema": SCHEMA, "regions": {"us-east-1": {}}}
    assert load_cache(two) == {"schema": SCHEMA, "regions": {"us-west-2": {}}}


def test_corrupt_cache_warns_once_at_the_caller(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.warns(UserWarning) as caught:
        assert load_cache(path) is None
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith(f"ignoring price cache {path}: not readable JSON (Expecting property name")
    assert message.endswith(
        "; the shipped catalog prices are used. Fix: run `gpucloud prices refresh` to rewrite it, or delete it"
    )
    # stacklevel 2 points past load_cache to whoever asked (under mutmut a trampoline frame sits in between).
    assert not caught[0].filename.endswith("cache.py")


@pytest.mark.parametrize(
    "doc",
    [
        {"schema": "gpucloud.prices/v0", "regions": {}},
        {"schema": SCHEMA, "regions": []},
        {"regions": {}},
        ["gpucloud.prices/v1"],
    ],
)
def test_foreign_cache_warns_with_the_expected_schema(doc: Any, tmp_path: Path) -> None:
    path = write(tmp_path / "prices.json", doc)
    with pytest.warns(UserWarning) as caught:
        assert load_cache(path) is None
    assert [str(w.message) for w in caught] == [
        f"ignoring price cache {path}: schema: expected 'gpucloud.prices/v1'; the shipped catalog prices are used. "
        "Fix: run `gpucloud prices refresh` to rewrite it, or delete it"
    ]
    assert not caught[0].filename.endswith("cache.py")
    assert region_prices("us-east-1", path) == {}


def test_region_prices_keeps_only_well_formed_priced_entries(tmp_path: Path) -> None:
    good = {"on_demand_usd": 1.0, "price_date": "2026-08-02"}
    path = cache_file(
        tmp_path,
        {
            "us-east-1": {
                "a.bad": "not a mapping",
                "b.bad": {**good, "future_key": 1},
                "c.bad": {"on_demand_usd": 1.0, "price_date": 20260802},
                "d.bad": {"on_demand_usd": 1.0},
                "e.bad": {"price_date": "2026-08-02", "price_source": "aws-price-list-api"},
                "f.bad": {"on_demand_usd": None, "price_date": "2026-08-02"},
                "g.ok": {**good, "spot_usd": None},
                "h.ok": {"availability_zones": [], "price_date": "2026-08-02"},
                "i.ok": {"reserved_3y_usd": 0.5, "price_date": "2026-08-02"},
            },
            "eu-west-1": ["not", "a", "mapping"],
        },
    )
    assert region_prices("us-east-1", path) == {
        "g.ok": {"on_demand_usd": 1.0, "price_date": "2026-08-02"},
        "h.ok": {"availability_zones": [], "price_date": "2026-08-02"},
        "i.ok": {"reserved_3y_usd": 0.5, "price_date": "2026-08-02"},
    }
    assert region_prices("eu-west-1", path) == {}
    assert region_prices("us-west-2", path) == {}


def test_region_service_rates_keep_positive_dated_numbers(tmp_path: Path) -> None:
    day = {"price_date": "2026-08-02", "price_source": "aws-price-list-api"}
    path = cache_file(
        tmp_path,
        {},
        service_rates={
            "eu-west-1": {
                "a": "not a mapping",
                "b": {"usd": 0.1},
                "c": {"usd": True, **day},
                "d": {"usd": 0, **day},
                "e": {"usd": -0.1, **day},
                "f": {"usd": "0.1", **day},
                "g": {"usd": 1, **day},
                "h": {"usd": 0.048, **day},
            },
            "us-east-1": ["not", "a", "mapping"],
        },
    )
    assert region_service_rates("eu-west-1", path) == {"g": {"usd": 1, **day}, "h": {"usd": 0.048, **day}}
    assert region_service_rates("us-east-1", path) == {}
    assert region_service_rates("eu-west-1", cache_file(tmp_path, {}, service_rates=["x"])) == {}
    assert region_service_rates("eu-west-1", tmp_path / "absent.json") == {}


# --- writing --------------------------------------------------------------------------------------------------------


def test_write_cache_refuses_a_disabled_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", "off")
    with pytest.raises(ValueError) as err:
        write_cache("us-east-1", {}, "t0")
    assert str(err.value) == "the price cache is disabled (GPUCLOUD_PRICE_CACHE='off')"


def test_write_cache_merges_regions_types_and_service_rates(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dir" / "prices.json"
    day1 = {"price_date": "2026-08-01", "price_source": "aws-price-list-api"}
    day2 = {"price_date": "2026-08-02", "price_source": "ec2-spot-price-history"}
    assert write_cache("us-east-1", {"g6.xlarge": {"on_demand_usd": 0.8, **day1}}, "t0", path) == path
    write_cache("eu-west-1", {"g5.xlarge": {"on_demand_usd": 1.1, **day1}}, "t1", path,
                service_rates={"nat_gateway_hour": {"usd": 0.048, **day1}})  # fmt: skip
    # Later: spot for one type (None leaves the earlier figure alone), a second type, one more service rate.
    write_cache("eu-west-1", {"g5.xlarge": {"spot_usd": 0.4, "on_demand_usd": None, **day2},
                              "a1.large": {"on_demand_usd": 0.05, **day1}}, "t2", path,
                service_rates={"ebs:gp3": {"usd": 0.088, **day1}})  # fmt: skip
    expected = {
        "schema": SCHEMA,
        "refreshed_at": "t2",
        "regions": {
            "us-east-1": {"g6.xlarge": {"on_demand_usd": 0.8, **day1}},
            "eu-west-1": {
                "a1.large": {"on_demand_usd": 0.05, **day1},
                "g5.xlarge": {"on_demand_usd": 1.1, "price_date": "2026-08-02",
                              "price_source": "ec2-spot-price-history", "spot_usd": 0.4},
            },
        },
        "service_rates": {
            "eu-west-1": {"ebs:gp3": {"usd": 0.088, **day1}, "nat_gateway_hour": {"usd": 0.048, **day1}}
        },
    }  # fmt: skip
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(expected, indent=2) + "\n"
    assert list(json.loads(text)["regions"]["eu-west-1"]) == ["a1.large", "g5.xlarge"]
    assert list(json.loads(text)["service_rates"]["eu-west-1"]) == ["ebs:gp3", "nat_gateway_hour"]
    assert sorted(p.name for p in path.parent.iterdir()) == ["prices.json"]


def test_write_cache_without_service_rates_writes_no_service_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "prices.json"
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(path))
    assert write_cache("us-east-1", {"g5.xlarge": {"spot_usd": 0.4, "price_date": "d"}}, "t0", service_rates={}) == path
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "schema": SCHEMA,
        "refreshed_at": "t0",
        "regions": {"us-east-1": {"g5.xlarge": {"spot_usd": 0.4, "price_date": "d"}}},
    }
