import sys

from gpucloud.cli import main

sys.exit(main())
