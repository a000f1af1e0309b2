"""`python -m gpucloud`: the same command line as the `gpucloud` console script."""

from gpucloud.cli import entry

if __name__ == "__main__":
    entry()
