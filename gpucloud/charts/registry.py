"""Resolve an image tag to its digest through the OCI distribution API (stdlib only).

`HEAD /v2/<name>/manifests/<tag>` with an Accept header that lists the OCI image index and the Docker manifest
list first (so a multi-arch tag answers with its index, the digest every platform shares), then the single-image
manifest types. The digest is the `Docker-Content-Digest` header; a registry that omits it on HEAD is asked again
with GET, and the digest is the sha256 of the body it returns (the distribution spec's definition).

Token auth: a 401 carrying `WWW-Authenticate: Bearer realm=...,service=...,scope=...` is answered by fetching an
anonymous pull token from the realm (ghcr.io, registry.k8s.io, public.ecr.aws, nvcr.io, quay.io, Docker Hub all
work this way for public images) and repeating the request with `Authorization: Bearer <token>`.

Errors: a tag the registry does not know (404, or an error body naming MANIFEST_UNKNOWN) is `TagNotFound`;
anything else that keeps the answer from being read (connection refused, timeouts, 5xx, a token endpoint that
fails) is `RegistryUnavailable`, which the CLI reports with exit 6 (nothing is wrong with the input: try later).
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

INDEX_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)
MANIFEST_TYPES = (
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
ACCEPT = ", ".join(INDEX_TYPES + MANIFEST_TYPES)
TIMEOUT_S = 20.0
DOCKER_HUB = "registry-1.docker.io"


class RegistryError(Exception):
    """Base of what resolving a tag can raise."""


class TagNotFound(RegistryError):
    """The registry answered, and it has no such tag (the lock names a tag upstream never pushed or removed)."""


class RegistryUnavailable(RegistryError):
    """The registry could not be reached or did not answer usably (exit 6: try again later)."""


@dataclass(frozen=True)
class Resolved:
    digest: str  # "sha256:<hex>"
    media_type: str | None

    @property
    def index(self) -> bool | None:
        """True for a multi-arch index, False for a single manifest, None when the registry did not say."""
        if not self.media_type:
            return None
        return self.media_type.split(";")[0].strip() in INDEX_TYPES


def registry_and_name(repository: str) -> tuple[str, str]:
    """(registry host, repository path) by the distribution/reference rules: the first component is a registry
    when it has a `.` or `:` or is `localhost`; otherwise the image is on Docker Hub (`library/` for one name)."""
    first, _, rest = repository.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        host = DOCKER_HUB if first == "docker.io" else first
        name = rest
    else:
        host, name = DOCKER_HUB, repository
    if host == DOCKER_HUB and "/" not in name:
        name = f"library/{name}"
    return host, name


_CHALLENGE = re.compile(r'(\w+)="([^"]*)"')


def _challenge(header: str) -> dict[str, str] | None:
    scheme, _, params = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return {k.lower(): v for k, v in _CHALLENGE.findall(params)}


class Client:
    """One resolver; `base_urls` maps a registry host to the URL to use for it (tests' fake registries only:
    it is a constructor argument, never read from configuration or the environment)."""

    def __init__(self, base_urls: Mapping[str, str] | None = None, timeout: float = TIMEOUT_S) -> None:
        self._base_urls = dict(base_urls or {})
        self._timeout = timeout
        self._tokens: dict[str, str] = {}

    def _base(self, host: str) -> str:
        return self._base_urls.get(host, f"https://{host}").rstrip("/")

    def _open(self, request: urllib.request.Request, what: str) -> tuple[int, Mapping[str, str], bytes]:
        """(status, headers with lowercase names, body); only a failure to get any answer raises."""
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read() if exc.fp is not None else b""
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            raise RegistryUnavailable(f"{what}: {reason}") from None

    def _token(self, challenge: dict[str, str], what: str) -> str:
        realm = challenge.get("realm")
        if not realm:
            raise RegistryUnavailable(f"{what}: the registry asked for a token but named no realm")
        query = {k: challenge[k] for k in ("service", "scope") if challenge.get(k)}
        url = realm + ("&" if "?" in realm else "?") + urllib.parse.urlencode(query) if query else realm
        status, _, body = self._open(urllib.request.Request(url), f"{what} (token from {realm})")
        if status != 200:
            raise RegistryUnavailable(f"{what}: the token endpoint {realm} answered HTTP {status}")
        try:
            doc = json.loads(body)
            token = doc.get("token") or doc.get("access_token")
        except (ValueError, AttributeError):
            token = None
        if not isinstance(token, str) or not token:
            raise RegistryUnavailable(f"{what}: the token endpoint {realm} returned no token")
        return token

    def _request(self, method: str, url: str, host: str, what: str) -> tuple[int, Mapping[str, str], bytes]:
        for attempt in (1, 2):
            headers = {"Accept": ACCEPT}
            if host in self._tokens:
                headers["Authorization"] = f"Bearer {self._tokens[host]}"
            status, resp_headers, body = self._open(urllib.request.Request(url, method=method, headers=headers), what)
            if status == 401 and attempt == 1:
                challenge = _challenge(resp_headers.get("www-authenticate", ""))
                if challenge is None:
                    raise RegistryUnavailable(f"{what}: HTTP 401 without a Bearer challenge (credentials needed)")
                self._tokens[host] = self._token(challenge, what)
                continue
            return status, resp_headers, body
        raise RegistryUnavailable(f"{what}: HTTP 401 again with a fresh token (the image may need credentials)")

    def resolve(self, repository: str, tag: str) -> Resolved:
        host, name = registry_and_name(repository)
        what = f"{repository}:{tag}"
        url = f"{self._base(host)}/v2/{name}/manifests/{urllib.parse.quote(tag, safe='')}"
        status, headers, _ = self._request("HEAD", url, host, what)
        if status == 200 and _is_digest(headers.get("docker-content-digest")):
            return Resolved(str(headers["docker-content-digest"]), headers.get("content-type"))
        if status in (200, 405):  # no digest header on HEAD, or HEAD refused: GET and hash the body
            status, headers, body = self._request("GET", url, host, what)
            if status == 200:
                digest = headers.get("docker-content-digest")
                computed = f"sha256:{hashlib.sha256(body).hexdigest()}"
                if _is_digest(digest) and digest != computed:
                    raise RegistryUnavailable(f"{what}: the registry's digest {digest} is not that of its body")
                return Resolved(computed, headers.get("content-type"))
        if status == 404:
            raise TagNotFound(f"{what}: the registry has no such tag (HTTP 404)")
        raise RegistryUnavailable(f"{what}: HTTP {status} from {host}")


def _is_digest(value: str | None) -> bool:
    return bool(value) and re.fullmatch(r"sha256:[0-9a-f]{64}", str(value)) is not None


__all__ = [
    "ACCEPT",
    "Client",
    "RegistryError",
    "RegistryUnavailable",
    "Resolved",
    "TagNotFound",
    "registry_and_name",
]
