"""Live price refresh (AWS Price List API and spot price history) into the local cache the catalog prefers.

`gpucloud.prices.cache` is stdlib-only (the catalog reads it); `gpucloud.prices.refresh` talks to AWS via boto3.
"""

from gpucloud.prices.cache import ENV_VAR, SCHEMA, cache_path, load_cache, region_prices, write_cache

__all__ = ["ENV_VAR", "SCHEMA", "cache_path", "load_cache", "region_prices", "write_cache"]
