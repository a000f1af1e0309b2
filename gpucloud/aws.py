"""boto3 plumbing shared by `gpucloud preflight`, `gpucloud prices refresh` and `gpucloud cost`: clients from the
standard credential chain, and one clear message (no traceback) for missing credentials, AccessDenied, bad regions."""

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
    """AWS could not be reached or refused us; `str()` is the one-paragraph message the CLI prints (exit 2)."""


def check_region(region: str) -> str:
    if region in ec2_regions():
        return region
    near = difflib.get_close_matches(region, sorted(ec2_regions()), n=1)
    hint = f" (did you mean '{near[0]}'?)" if near else ""
    raise AwsAccessError(f"unknown AWS region '{region}'{hint}")


def is_access_denied(exc: BaseException) -> bool:
    from botocore.exceptions import ClientError

    return isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in _ACCESS_CODES


@contextmanager
def aws_errors(what: str) -> Iterator[None]:
    """Turn credential, permission and connection failures into AwsAccessError."""
    from botocore.exceptions import (
        ClientError,
        EndpointConnectionError,
        NoCredentialsError,
        NoRegionError,
        PartialCredentialsError,
        ProfileNotFound,
    )

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
    except EndpointConnectionError as exc:
        raise AwsAccessError(f"{what}: cannot reach AWS ({exc}); check the region and your network") from None
    except ClientError as exc:
        if is_access_denied(exc):
            err = exc.response.get("Error", {})
            raise AwsAccessError(
                f"{what}: AWS denied {exc.operation_name} ({err.get('Code')}: {err.get('Message')}); "
                "grant the IAM permission or use credentials that have it"
            ) from None
        raise


ClientFactory = Callable[[str, str], Any]


def default_clients(service: str, region: str) -> Any:
    """A boto3 client from the standard chain (AWS_ENDPOINT_URL and friends are honoured by botocore)."""
    import boto3

    return boto3.session.Session().client(service, region_name=region)
