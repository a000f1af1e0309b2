"""Repository-root conftest: makes pytest put this checkout (not an installed copy) first on sys.path."""
