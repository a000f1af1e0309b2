"""Secret detection that decodes: what a reader of the value (the instance, the pod, anyone who can describe the
resource) would see, searched for credentials.

Layers are peeled before matching, recursively (depth-bounded): base64 (also nested, and base64 runs embedded in
a script such as ``echo ... | base64 -d``), gzip (magic ``1f 8b``), MIME multi-part user data (cloud-init's
``Content-Type: multipart/mixed``, each part decoded by its Content-Transfer-Encoding), and cloud-init
``#cloud-config`` ``write_files`` entries with ``encoding`` ``b64`` / ``base64`` / ``gz`` / ``gzip`` /
``gz+b64`` / ``gz+base64`` / ``gzip+b64`` / ``gzip+base64`` (cloud-init docs, module "Write Files").

Findings are of two strengths. A known token format (``TOKENS``: the vendors' documented prefixes and lengths,
as gitleaks v8 config/gitleaks.toml writes them) is an error: it is a credential. A high-entropy value assigned
to a secret-looking name (``PASSWORD=``, ``API_KEY:``) is only a warning: it may be a hash, a random id, or a
test fixture, and the pack cannot be sure.
"""

from __future__ import annotations

import base64
import binascii
import email
import math
import re
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

MAX_DEPTH = 6
MAX_BYTES = 1 << 20  # never inflate more than 1 MiB from one value (a gzip bomb stays a bounded read)

# (what, pattern). Prefixes and lengths from the vendors' token formats, as gitleaks v8 writes them.
TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an AWS access key ID", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}\b")),
    (
        "an AWS secret access key",
        re.compile(r"aws_?secret_?access_?key[\"']?\s*[=:]\s*[\"']?[A-Za-z0-9/+=]{40}\b", re.IGNORECASE),
    ),
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("a GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{82})\b")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("a Slack webhook URL", re.compile(r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{20,}")),
    ("a Stripe key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{24,}\b")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("an npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("a PyPI token", re.compile(r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}")),
    ("a Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}\b")),
    ("a SendGrid API key", re.compile(r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b")),
)
# NAME=value / name: value where the name says it holds a secret.
_ASSIGNMENT = re.compile(
    r"(?P<name>[A-Za-z0-9_.-]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIALS?)"
    r"[A-Za-z0-9_.-]*)[\"']?\s*[=:]\s*[\"']?(?P<value>[A-Za-z0-9+/=_.~!@#%^&*-]{16,})(?![A-Za-z0-9(\[])",
    re.IGNORECASE,
)
ENTROPY_BITS = 3.5  # Shannon bits per character from which a value assigned to a secret name is reported
_B64 = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")
_B64_WHOLE = re.compile(r"^[A-Za-z0-9+/\s]+={0,2}\s*$")
_WRITE_FILES_ENCODINGS = {
    "b64": ("b64",),
    "base64": ("b64",),
    "gz": ("gz",),
    "gzip": ("gz",),
    "gz+b64": ("b64", "gz"),
    "gz+base64": ("b64", "gz"),
    "gzip+b64": ("b64", "gz"),
    "gzip+base64": ("b64", "gz"),
}


@dataclass(frozen=True)
class Finding:
    what: str  # "an AWS access key ID", or "a high-entropy value of PASSWORD"
    layer: str  # how it was reached: "base64 > gzip > write_files[0] /etc/app.env"
    token: bool  # a known token format (an error); False: high entropy only (a warning)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _b64(raw: str) -> bytes | None:
    compact = "".join(raw.split())
    if len(compact) < 16 or len(compact) % 4 or not _B64_WHOLE.match(raw):
        return None
    try:
        return base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        return None


def _b64_bytes(data: bytes) -> bytes | None:
    compact = b"".join(data.split())
    try:
        return base64.b64decode(compact + b"=" * (-len(compact) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def _gunzip(data: bytes) -> bytes | None:
    if not data.startswith(b"\x1f\x8b"):
        return None
    try:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        return d.decompress(data, MAX_BYTES)
    except (zlib.error, OSError, EOFError):
        return None


def _text(data: bytes) -> str | None:
    try:
        out = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Binary that happens to decode (random bytes) is not text a reader would see.
    printable = sum(1 for ch in out if ch.isprintable() or ch in "\n\r\t")
    return out if out and printable / len(out) > 0.95 else None


def _bytes_layers(data: bytes, layer: str, depth: int) -> Iterator[tuple[str, str]]:
    inflated = _gunzip(data)
    if inflated is not None:
        yield from _bytes_layers(inflated, f"{layer} > gzip" if layer else "gzip", depth + 1)
        return
    text = _text(data)
    if text is not None:
        yield from layers(text, layer, depth + 1)


def _mime(text: str, layer: str, depth: int) -> Iterator[tuple[str, str]]:
    msg = email.message_from_string(text)
    if not msg.is_multipart():
        return
    for i, part in enumerate(msg.walk()):
        if part.is_multipart():
            continue
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            yield from _bytes_layers(payload, f"{layer} > MIME part {i}" if layer else f"MIME part {i}", depth)


def _cloud_config(text: str, layer: str, depth: int) -> Iterator[tuple[str, str]]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return
    if not isinstance(doc, dict):
        return
    for i, f in enumerate(doc.get("write_files") or []):
        if not isinstance(f, dict) or not isinstance(f.get("content"), str):
            continue
        where = f"{layer} > " if layer else ""
        where += f"write_files[{i}] {f.get('path', '')}".rstrip()
        steps = _WRITE_FILES_ENCODINGS.get(str(f.get("encoding", "")).strip().lower(), ())
        data: bytes | None = f["content"].encode()
        for step in steps:
            if data is None:
                break
            data = _b64_bytes(data) if step == "b64" else _gunzip(data)
        if data is not None:
            yield from _bytes_layers(data, where, depth)


def layers(text: str, layer: str = "", depth: int = 0) -> Iterator[tuple[str, str]]:
    """(how it was reached, text) for the value and every layer decoded from it."""
    if depth > MAX_DEPTH or not text:
        return
    yield layer or "as written", text
    whole = _b64(text)
    if whole is not None:
        yield from _bytes_layers(whole, f"{layer} > base64" if layer else "base64", depth)
        return
    head = text.lstrip()[:200].lower()
    if "content-type: multipart/" in head or ("mime-version:" in head and "multipart" in text[:2000].lower()):
        yield from _mime(text, layer, depth)
    if head.startswith("#cloud-config"):
        yield from _cloud_config(text, layer, depth)
    # Base64 runs inside a script (echo <b64> | base64 -d > file) are decoded too.
    for m in _B64.finditer(text):
        run = m.group(0)
        if len(run) % 4 == 0 and run != text.strip():
            try:
                data = base64.b64decode(run, validate=True)
            except (binascii.Error, ValueError):
                continue
            yield from _bytes_layers(data, f"{layer} > embedded base64" if layer else "embedded base64", depth)


def scan(value: Any, *, entropy_bits: float = ENTROPY_BITS) -> list[Finding]:
    """Every credential the value holds, in any layer; one finding per kind, at the first layer it shows in."""
    if not isinstance(value, str) or not value:
        return []
    found: dict[str, Finding] = {}
    for layer, text in layers(value):
        tokens_here = False
        for what, pattern in TOKENS:
            if pattern.search(text):
                found.setdefault(what, Finding(what, layer, True))
                tokens_here = True
        if tokens_here:
            continue
        for m in _ASSIGNMENT.finditer(text):
            v = m.group("value")
            # A literal, not code (``token = fh.read().strip()``) or a reference: letters and digits mixed.
            literal = any(ch.isdigit() for ch in v) and any(ch.isalpha() for ch in v)
            if literal and entropy(v) >= entropy_bits and not v.lower().startswith(("arn:", "http", "/", "ssm:")):
                what = f"a high-entropy value assigned to {m.group('name')}"
                found.setdefault(what, Finding(what, layer, False))
    return list(found.values())


def tokens(value: Any) -> list[Finding]:
    return [f for f in scan(value) if f.token]


def describe(findings: list[Finding]) -> str:
    return "; ".join(f"{f.what} ({f.layer})" for f in findings)
