"""Exit codes and the one exception type sub-commands raise for bad input."""

from __future__ import annotations

EXIT_OK = 0
EXIT_VIOLATIONS = 1
EXIT_INVALID = 2
EXIT_PREFLIGHT = 3
EXIT_INTERNAL = 4
# The plan would be rejected or stranded by upstream (helm, the API server, the provider, the scheduler).
EXIT_CONFORMANCE = 5
# AWS stayed unavailable after botocore's retries (throttling, 502/503/504, timeouts, dropped connections) or
# answered with data gpucloud cannot read: nothing is wrong with the input, run again later.
EXIT_AWS_UNAVAILABLE = 6


class CliError(Exception):
    """A user-facing error: printed as one message, exit code as given (2 = invalid input by default)."""

    def __init__(self, message: str, exit_code: int = EXIT_INVALID) -> None:
        super().__init__(message)
        self.exit_code = exit_code
