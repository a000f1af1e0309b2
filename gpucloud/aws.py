"""boto3 plumbing shared by `gpucloud preflight`, `gpucloud prices refresh` and `gpucloud
cost`: clients from the standard
credential chain with bounded timeouts and botocore's retry modes, and one clear message (no traceback) for
missing credentials, AccessDenied and bad regions (exit 2) and for AWS that stays unavailable (exit 6).

Timeouts and retries (docs/cost.md, "Timeouts and retries"): connect 5 s and read 15 s per attempt, botocore's
`standard` retry mode with 3 attempts (exponential backoff with jitter on throttling, 5xx answers, timeouts and
dropped connections). botocore's own variables choose otherwise: ``AWS_RETRY_MODE`` (``standard``, ``adaptive``:
client-side rate limiting as well, or ``legacy``) and ``AWS_MAX_ATTEMPTS``; ``GPUCLOUD_AWS_CONNECT_TIMEOUT`` and
``GPUCLOUD_AWS_READ_TIMEOUT`` (seconds) the timeouts. An error botocore still retried on its last attempt is a
lasting failure: AwsUnavailableError.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from gpucloud.catalog import ec2_regions

_ACCESS_CODES = frozenset(
    {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnrecognizedClientException",
     "InvalidClientTokenId", "AuthFailure", "ExpiredToken", "ExpiredTokenException", "SignatureDoesNotMatch"}
)  # fmt: skip


class AwsAccessError(Exception):
    """AWS refused us (credentials, permissions, region); `str()` is the one-paragraph message the CLI prints
    (exit 2: the user's setup is what needs fixing)."""


class AwsUnavailableError(Exception):
    """AWS could not be reached or kept failing after botocore's retries (throttling, 502/503/504, timeouts,
    dropped connections), or answered with something gpucloud cannot read; `str()` is the message (exit 6: try
    again later, the input is fine)."""


class AwsBadAnswerError(AwsUnavailableError):
    """The endpoint answered with something that is not an AWS response (an HTML error page: a proxy, or a moto
    server without the operation). Preflight makes the check a warning; elsewhere it is AwsUnavailableError."""


CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 15.0
DEFAULT_RETRY_MODE = "standard"
DEFAULT_MAX_ATTEMPTS = 3
RETRY_MODES = ("standard", "adaptive", "legacy")
CONNECT_TIMEOUT_ENV = "GPUCLOUD_AWS_CONNECT_TIMEOUT"
READ_TIMEOUT_ENV = "GPUCLOUD_AWS_READ_TIMEOUT"


def check_region(region: str) -> str:
    if region in ec2_regions():
        return region
    # Region names are lower-case: `US-EAST-1` means us-east-1.
    folded = region.strip().lower()
    near = [folded] if folded in ec2_regions() else difflib.get_close_matches(folded, sorted(ec2_regions()), n=1)
    hint = f" (did you mean '{near[0]}'?)" if near else ""
    raise AwsAccessError(f"unknown AWS region '{region}'{hint}")


def is_access_denied(exc: BaseException) -> bool:
    from botocore.exceptions import ClientError

    return isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in _ACCESS_CODES


@contextmanager
def aws_errors(what: str, every_api_error: bool = False) -> Iterator[None]:
    """Turn credential, permission and region problems into AwsAccessError, and AWS staying unreachable,
    throttled or unavailable after the retries into AwsUnavailableError. With `every_api_error`, any other error
    answer of the API is an AwsUnavailableError too (for callers that cannot carry on without the answer)."""
    from botocore.exceptions import (
        ClientError,
        EndpointConnectionError,
        HTTPClientError,
        NoCredentialsError,
        NoRegionError,
        PartialCredentialsError,
        ProfileNotFound,
    )
    from botocore.parsers import ResponseParserError

    try:
        yield
    except (NoCredentialsError, PartialCredentialsError) as exc:
        raise AwsAccessError(
            f"{what}: no AWS credentials found ({exc}); configure them through the standard chain "
            "(AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO, or an instance role)"
        ) from None
    except ProfileNotFound as exc:
        raise AwsAccessError(f"{what}: {exc}; check AWS_PROFILE") from None
    except NoRegionError:
        raise AwsAccessError(f"{what}: no AWS region; pass --region or set AWS_REGION") from None
    except (EndpointConnectionError, HTTPClientError) as exc:
        # Timeouts, refused and dropped connections: botocore already retried them (retry_policy()).
        raise AwsUnavailableError(
            f"{what}: cannot reach AWS after {_attempts()} attempts ({type(exc).__name__}: {exc}); check the region, "
            f"your network and any AWS_ENDPOINT_URL, then run again{_knobs()}"
        ) from None
    except ResponseParserError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise AwsBadAnswerError(
            f"{what}: the endpoint answered with something that is not an AWS response ({first}); check "
            "AWS_ENDPOINT_URL or any proxy in between, then run again"
        ) from None
    except ClientError as exc:
        err = exc.response.get("Error", {})
        if is_access_denied(exc):
            raise AwsAccessError(
                f"{what}: AWS denied {exc.operation_name} ({err.get('Code')}: {err.get('Message')}); "
                "grant the IAM permission or use credentials that have it"
            ) from None
        if is_lasting(exc):
            kind = "throttled" if is_throttling(exc) else "failing"
            raise AwsUnavailableError(
                f"{what}: AWS kept {kind} {exc.operation_name} for {_attempts()} attempts "
                f"({api_error_text(exc)}); run again later{_knobs()}"
            ) from None
        if every_api_error:
            raise AwsUnavailableError(
                f"{what}: AWS answered {exc.operation_name} with an error ({api_error_text(exc)})"
            ) from None
        raise


# After botocore's retries, these say the service (or something in front of it) is unavailable, not that this
# request is wrong: gateway errors and botocore's transient codes. A plain 500 is left to the caller, because an
# endpoint that does not implement an operation (a moto server) answers 500 too, and preflight makes that check a
# warning rather than stopping.
_UNAVAILABLE_STATUS = frozenset({502, 503, 504})


def api_error_text(exc: Any) -> str:
    """`Code: Message` of an API error in one line; an HTML error page (a proxy, a moto server without the
    operation) is named as such instead of pasted."""
    err = exc.response.get("Error", {})
    message = " ".join(str(err.get("Message") or "").split())
    if message.lstrip().startswith("<"):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        message = f"HTTP {status} with an HTML page, not an AWS error answer"
    return f"{err.get('Code')}: {message[:300]}"


def is_lasting(exc: BaseException) -> bool:
    """Whether botocore gave up on a throttled or unavailable service (its retry handler marks the response it
    stopped at with MaxAttemptsReached)."""
    from botocore.exceptions import ClientError
    from botocore.retries.standard import TransientRetryableChecker

    if not isinstance(exc, ClientError):
        return False
    if is_throttling(exc):
        return True
    meta = exc.response.get("ResponseMetadata", {})
    code = exc.response.get("Error", {}).get("Code")
    return meta.get("HTTPStatusCode") in _UNAVAILABLE_STATUS or code in (
        "ServiceUnavailable",
        *TransientRetryableChecker._TRANSIENT_ERROR_CODES,
    )


def is_throttling(exc: BaseException) -> bool:
    """A throttling answer, by botocore's own list of throttling codes (and HTTP 429)."""
    from botocore.exceptions import ClientError
    from botocore.retries.standard import ThrottledRetryableChecker

    if not isinstance(exc, ClientError):
        return False
    code = exc.response.get("Error", {}).get("Code")
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code in ThrottledRetryableChecker._THROTTLED_ERROR_CODES or status == 429


def retry_policy() -> dict[str, Any]:
    """The retry mode, attempts and timeouts every client gets: botocore's variables, else gpucloud's defaults.
    A bad value is the user's setup to fix: AwsAccessError naming the variable and the fix (exit 2)."""
    import os

    mode = os.environ.get("AWS_RETRY_MODE") or DEFAULT_RETRY_MODE
    if mode not in RETRY_MODES:
        modes = ", ".join(RETRY_MODES)
        raise AwsAccessError(f"AWS_RETRY_MODE={mode!r} is not a botocore retry mode; use one of {modes}")
    attempts_text = os.environ.get("AWS_MAX_ATTEMPTS") or str(DEFAULT_MAX_ATTEMPTS)
    try:
        attempts = int(attempts_text)
    except ValueError:
        attempts = 0
    if attempts < 1:
        raise AwsAccessError(f"AWS_MAX_ATTEMPTS={attempts_text!r} must be a whole number of at least 1, e.g. 3")
    timeouts = {}
    for name, env, default in (
        ("connect_timeout", CONNECT_TIMEOUT_ENV, CONNECT_TIMEOUT_S),
        ("read_timeout", READ_TIMEOUT_ENV, READ_TIMEOUT_S),
    ):
        text = os.environ.get(env) or str(default)
        try:
            value = float(text)
        except ValueError:
            value = 0.0
        if not 0 < value <= 600:
            raise AwsAccessError(
                f"{env}={text!r} must be a number of seconds above 0 and at most 600, e.g. {default:g}"
            )
        timeouts[name] = value
    return {"mode": mode, "max_attempts": attempts, **timeouts}


def _attempts() -> int:
    try:
        return int(retry_policy()["max_attempts"])
    except AwsAccessError:
        return DEFAULT_MAX_ATTEMPTS


def _knobs() -> str:
    return f" (AWS_MAX_ATTEMPTS and AWS_RETRY_MODE=adaptive allow more patience; timeouts: {READ_TIMEOUT_ENV})"


ClientFactory = Callable[[str, str], Any]


def default_clients(service: str, region: str) -> Any:
    """A boto3 client from the standard chain (AWS_ENDPOINT_URL and friends are honoured by botocore), with
    bounded timeouts and retries (retry_policy())."""
    import boto3
    from botocore.config import Config

    policy = retry_policy()
    config = Config(
        connect_timeout=policy["connect_timeout"],
        read_timeout=policy["read_timeout"],
        retries={"mode": policy["mode"], "total_max_attempts": policy["max_attempts"]},
    )
    return boto3.session.Session().client(service, region_name=region, config=config)
