from gpucloud.cli import entry

entry()
