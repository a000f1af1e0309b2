"""Upstream Helm charts: the pinned lock, the vendored chart sources and real Helm rendering."""
