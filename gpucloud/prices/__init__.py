"""Instance prices per region and market: the shipped dated snapshot, the local cache `gpucloud prices refresh`
writes, and the price book that lays one over the other.

`gpucloud.prices.book` and `gpucloud.prices.cache` are stdlib + catalog only (the cost engine and the policy pack
read them); `gpucloud.prices.refresh` talks to AWS via boto3.
"""

from gpucloud.prices.book import Figure, PriceBook, RegionalRates, get_price_book, region_rates
from gpucloud.prices.cache import ENV_VAR, SCHEMA, cache_path, load_cache, region_prices, write_cache

__all__ = [
    "ENV_VAR",
    "SCHEMA",
    "Figure",
    "PriceBook",
    "RegionalRates",
    "cache_path",
    "get_price_book",
    "load_cache",
    "region_prices",
    "region_rates",
    "write_cache",
]
