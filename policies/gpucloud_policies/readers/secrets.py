"""Secret detection that decodes: what a reader of the value (the instance, the pod, anyone who can describe the
resource) would see, searched for credentials.

Layers are peeled before matching, recursively (depth-bounded): base64 (also nested, and base64 runs embedded in
a script such as ``echo ... | base64 -d``), gzip (magic ``1f 8b``), MIME multi-part user data (cloud-init's
``Content-Type: multipart/mixed``, each part decoded by its Content-Transfer-Encoding), and cloud-init
``#cloud-config`` ``write_files`` entries with ``encoding`` ``b64`` / ``base64`` / ``gz`` / ``gzip`` /
``gz+b64`` / ``gz+base64`` / ``gzip+b64`` / ``gzip+base64`` (cloud-init docs, module "Write Files").

Findings are of two strengths. A known token format (``TOKENS``: gitleaks' rule of the same vendor at the tag
``GITLEAKS`` names, regex, entropy floor and allowlist, each cited by rule id) is an error: it is a credential.
A high-entropy value assigned to a secret-looking name (``PASSWORD=``, ``API_KEY:``) is only a warning: it may be
a hash, a random id, or a test fixture, and the pack cannot be sure.
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

GITLEAKS = "gitleaks v8.30.1 (commit 83d9cd684c87d95d656c1458ef04895a7f1cbd8e)"
# gitleaks' utils.GenerateUniqueTokenRegex (cmd/generate/config/utils/generate.go): the token starts at a word
# boundary and ends at a quote, backtick, blank, ``;``, an escaped ``\n``/``\r`` or the end of the text, so a
# longer run of the same alphabet is not read as a token. ``\Z`` is Go's ``$`` without (?m): the end of the text.
_END = r"(?:[\x60'\"\s;]|\\[nr]|\Z)"


def _unique(body: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(rf"\b({body}){_END}", flags | re.ASCII)


@dataclass(frozen=True)
class TokenFormat:
    """A vendor's token format as gitleaks' rule ``rule`` writes it (regex, entropy floor, allowlist)."""

    what: str  # the finding's wording: "a GitHub token"
    rule: str  # the gitleaks rule id at GITLEAKS; "" where gitleaks has no rule for the format (said why below)
    pattern: re.Pattern[str]  # group 1, where the pattern has one, is the secret (gitleaks' first capture group)
    entropy: float = 0.0  # gitleaks drops a match whose secret has entropy <= this (detect/detect.go); 0: no floor
    allow: re.Pattern[str] | None = None  # a secret this finds is a documented placeholder (the rule's allowlist)

    def found_in(self, text: str) -> bool:
        for m in self.pattern.finditer(text):
            secret = next((g for g in m.groups() if g), m.group(0))
            if self.entropy and entropy(secret) <= self.entropy:
                continue  # ghp_xxxxxxxx... : the shape of a token, the content of a placeholder
            if self.allow is not None and self.allow.search(secret):
                continue
            return True
        return False


def _fmt(what: str, rule: str, pattern: str | re.Pattern[str], entropy: float = 0.0, allow: str = "") -> TokenFormat:
    compiled = pattern if isinstance(pattern, re.Pattern) else re.compile(pattern, re.ASCII)
    return TokenFormat(what, rule, compiled, entropy, re.compile(allow) if allow else None)


# Each format is gitleaks' rule of the same id at GITLEAKS (config/gitleaks.toml, generated from
# cmd/generate/config/rules/<vendor>.go): the same regex (Go RE2 in Python spelling: re.ASCII for RE2's ASCII
# \b, \w and \s; ``(?i:...)`` for a mid-pattern ``(?i)``), entropy floor and rule allowlist. Where ours differs
# the line says why. tests/policies/test_token_formats.py holds gitleaks' own sample tokens per rule.
# gitleaks v8.30.1 has no rule for Weights & Biases, NVIDIA NGC or Docker Hub tokens ("docker" is even a stopword
# of its keyword-driven generic-api-key rule), and no source outside the team gives their formats: they are not
# tokens here. Assigned to WANDB_API_KEY, NGC_API_KEY or DOCKERHUB_TOKEN they are high-entropy assignments (a
# warning, GC-SEC-155).
TOKENS: tuple[TokenFormat, ...] = (
    # AWS key IDs are base32 after the prefix ([A-Z2-7]: "current AWS tokens cannot contain [0,1,8,9]", aws.go);
    # ``...EXAMPLE`` is the IAM user guide's placeholder (AKIAIOSFODNN7EXAMPLE), allowlisted by gitleaks.
    _fmt(
        "an AWS access key ID",
        "aws-access-token",
        r"\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b",
        3,
        r".+EXAMPLE$",
    ),
    # gitleaks has no rule of its own for the secret key (only generic-api-key, keyword-driven): ours is the
    # documented shape, 40 base64 characters assigned to aws_secret_access_key (the credentials file's key, and
    # the AWS_SECRET_ACCESS_KEY variable), with the guide's placeholder (wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY)
    # allowed like the key ID's.
    _fmt(
        "an AWS secret access key",
        "",
        re.compile(r"aws_?secret_?access_?key[\"']?\s*[=:]\s*[\"']?([A-Za-z0-9/+=]{40})\b", re.IGNORECASE | re.ASCII),
        3,
        r"EXAMPLEKEY$",
    ),
    _fmt(
        "an Amazon Bedrock API key",
        "aws-amazon-bedrock-api-key-long-lived",
        _unique(r"ABSK[A-Za-z0-9+/]{109,269}={0,2}"),
        3,
    ),
    _fmt(
        "an Amazon Bedrock API key",
        "aws-amazon-bedrock-api-key-short-lived",
        r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t",
        3,
    ),
    # A header alone (a script that greps for one, a doc line) is not a key: gitleaks wants 64 characters of
    # body and the closing line.
    _fmt(
        "a private key",
        "private-key",
        re.compile(
            r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----",
            re.IGNORECASE | re.ASCII,
        ),
    ),
    _fmt("a GitHub token", "github-pat", r"ghp_[0-9a-zA-Z]{36}", 3),
    _fmt("a GitHub token", "github-oauth", r"gho_[0-9a-zA-Z]{36}", 3),
    _fmt("a GitHub token", "github-app-token", r"(?:ghu|ghs)_[0-9a-zA-Z]{36}", 3),
    _fmt("a GitHub token", "github-refresh-token", r"ghr_[0-9a-zA-Z]{36}", 3),
    _fmt("a GitHub token", "github-fine-grained-pat", r"github_pat_\w{82}", 3),
    # gitlab-pat-routable and gitlab-runner-authentication-token-routable need not be copied: every token they
    # match starts with 20 characters the two rules below match.
    _fmt("a GitLab token", "gitlab-pat", r"glpat-[\w-]{20}", 3),
    _fmt("a GitLab token", "gitlab-runner-authentication-token", r"glrt-[0-9a-zA-Z_\-]{20}", 3),
    _fmt("a GitLab token", "gitlab-deploy-token", r"gldt-[0-9a-zA-Z_\-]{20}", 3),
    _fmt("a GitLab token", "gitlab-ptt", r"glptt-[0-9a-f]{40}", 3),
    _fmt("a GitLab token", "gitlab-cicd-job-token", r"glcbt-[0-9a-zA-Z]{1,5}_[0-9a-zA-Z_-]{20}", 3),
    _fmt("a Slack token", "slack-bot-token", r"xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*", 3),
    _fmt("a Slack token", "slack-legacy-bot-token", r"xoxb-[0-9]{8,14}-[a-zA-Z0-9]{18,26}", 2),
    _fmt("a Slack token", "slack-user-token", r"xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}", 2),
    _fmt("a Slack token", "slack-legacy-token", r"xox[os]-\d+-\d+-\d+-[a-fA-F\d]+", 2),
    _fmt("a Slack token", "slack-legacy-workspace-token", r"xox[ar]-(?:\d-)?[0-9a-zA-Z]{8,48}", 2),
    _fmt("a Slack token", "slack-app-token", re.compile(r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+", re.I | re.A), 2),
    _fmt(
        "a Slack token",
        "slack-config-access-token",
        re.compile(r"xoxe.xox[bp]-\d-[A-Z0-9]{163,166}", re.IGNORECASE | re.ASCII),
        2,
    ),
    _fmt("a Slack token", "slack-config-refresh-token", re.compile(r"xoxe-\d-[A-Z0-9]{146}", re.I | re.A), 2),
    # gitleaks leaves the dot unescaped (any character); ours wants the host's dot.
    _fmt(
        "a Slack webhook URL",
        "slack-webhook-url",
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}",
    ),
    _fmt("a Stripe key", "stripe-access-token", _unique(r"(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}"), 2),
    # gitleaks' rule allowlist of 16 named keys (keys published in public SDKs and samples) is not copied: a
    # key in this platform's user data or environment is used as a credential whoever published it.
    _fmt("a Google API key", "gcp-api-key", _unique(r"AIza[\w-]{35}"), 4),
    _fmt("an npm token", "npm-access-token", _unique(r"npm_[a-z0-9]{36}", re.IGNORECASE), 2),
    _fmt("a PyPI token", "pypi-upload-token", r"pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}", 3),
    _fmt("a Hugging Face token", "huggingface-access-token", _unique(r"hf_(?i:[a-z]{34})"), 2),
    _fmt("a Hugging Face token", "huggingface-organization-api-token", _unique(r"api_org_(?i:[a-z]{34})"), 2),
    _fmt("a SendGrid API key", "sendgrid-api-token", _unique(r"SG\.(?i:[a-z0-9=_\-.]{66})"), 2),
    _fmt(
        "an OpenAI API key",
        "openai-api-key",
        _unique(
            r"sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ"
            r"(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20}"
        ),
        3,
    ),
    _fmt("an Anthropic API key", "anthropic-api-key", _unique(r"sk-ant-api03-[a-zA-Z0-9_\-]{93}AA")),
    _fmt("an Anthropic API key", "anthropic-admin-api-key", _unique(r"sk-ant-admin01-[a-zA-Z0-9_\-]{93}AA")),
    _fmt("a Databricks token", "databricks-api-token", _unique(r"dapi[a-f0-9]{32}(?:-\d)?"), 3),
    _fmt("a Pulumi access token", "pulumi-api-token", _unique(r"pul-[a-f0-9]{40}"), 2),
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
    # ``layer`` is never empty here: bytes are reached through a named layer (base64, a MIME part, a file).
    inflated = _gunzip(data)
    if inflated is not None:
        yield from _bytes_layers(inflated, f"{layer} > gzip", depth + 1)
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
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # as safe_load, in C
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
        for fmt in TOKENS:
            if fmt.found_in(text):
                found.setdefault(fmt.what, Finding(fmt.what, layer, True))
                tokens_here = True
        if tokens_here:
            continue
        for m in _ASSIGNMENT.finditer(text):
            v = m.group("value")
            # A literal, not code (``token = fh.read().strip()``) or a reference: letters and digits mixed.
            literal = any(ch.isdigit() for ch in v) and any(ch.isalpha() for ch in v)
            # A path is a reference too. (An ARN, URL or ssm: name never gets here: ':' ends the value.)
            if literal and entropy(v) >= entropy_bits and not v.startswith("/"):
                what = f"a high-entropy value assigned to {m.group('name')}"
                found.setdefault(what, Finding(what, layer, False))
    return list(found.values())


def tokens(value: Any) -> list[Finding]:
    return [f for f in scan(value) if f.token]


def describe(findings: list[Finding]) -> str:
    return "; ".join(f"{f.what} ({f.layer})" for f in findings)
