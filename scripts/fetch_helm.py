"""Install the pinned Helm and kubectl binaries into a directory: a thin wrapper over `gpucloud tools install`.

The logic (download, sha256 pins, atomic writes) lives in gpucloud/tools.py, so the Makefile, this script and an
installed gpucloud fetching the tools on first use go through the same code.

    python scripts/fetch_helm.py DEST_DIR
"""

from __future__ import annotations

import sys

from gpucloud.cli import main

if __name__ == "__main__":
    sys.exit(main(["tools", "install", "--dest", *sys.argv[1:2]]))
