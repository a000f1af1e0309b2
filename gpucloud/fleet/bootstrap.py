"""The labels and taints a node registers with, read from its user data (nodeadm NodeConfig, bootstrap.sh
kubelet flags, Bottlerocket TOML settings), in plain text or MIME multi-part."""

from __future__ import annotations

import email
import shlex
import tomllib
from dataclasses import dataclass
from typing import Any

import yaml

from gpucloud.fleet.model import Taint
from gpucloud.fleet.values import decode_user_data, known


@dataclass
class Bootstrap:
    labels: dict[str, str]
    taints: list[Taint]
    known: bool  # False: the user data is unknown at plan time (computed from cluster outputs)
    full: bool  # the user data joins the cluster itself (custom AMI / self-managed)
    bottlerocket: bool = False  # Bottlerocket TOML settings


def parse_user_data(value: Any) -> Bootstrap:
    """Labels and taints a node registers with, from user data (base64 or plain text)."""
    if not known(value):
        return Bootstrap({}, [], value is None, False) if value is None else Bootstrap({}, [], False, True)
    text = decode_user_data(value) or ""
    labels: dict[str, str] = {}
    taints: list[Taint] = []
    full = False
    bottlerocket = False
    parts: list[tuple[str, str]] = []
    if text.lstrip().startswith("MIME-Version") or "Content-Type: multipart" in text[:400]:
        msg = email.message_from_string(text)
        for part in msg.walk():
            if part.is_multipart():
                continue
            payload = part.get_payload(decode=True)
            body = payload.decode(errors="replace") if isinstance(payload, bytes) else str(part.get_payload())
            parts.append((part.get_content_type(), body))
    else:
        parts.append(("text/plain", text))
    for ctype, body in parts:
        if ctype == "application/node.eks.aws" or "kind: NodeConfig" in body:
            for doc in _yaml_docs(body):
                spec = doc.get("spec") if isinstance(doc, dict) else None
                if not isinstance(spec, dict):
                    continue
                full = full or bool(spec.get("cluster"))
                kubelet = spec.get("kubelet") or {}
                for flag in kubelet.get("flags") or []:
                    _flags(str(flag), labels, taints)
                for t in ((kubelet.get("config") or {}).get("registerWithTaints")) or []:
                    taints.append(Taint(str(t.get("key", "")), str(t.get("value") or ""), str(t.get("effect", ""))))
        elif "[settings" in body:
            bottlerocket = True
            full = full or _bottlerocket(body, labels, taints)
        else:
            full = full or "bootstrap.sh" in body or "nodeadm" in body
            _flags(body, labels, taints)
    return Bootstrap(labels, taints, True, full, bottlerocket)


def _yaml_docs(body: str) -> list[Any]:
    try:
        return list(yaml.safe_load_all(body))
    except yaml.YAMLError:
        return []


def _flags(text: str, labels: dict[str, str], taints: list[Taint]) -> None:
    # kubelet flags, also inside bootstrap.sh --kubelet-extra-args '...'
    try:
        words = shlex.split(text, posix=True)
    except ValueError:
        words = text.split()
    expanded: list[str] = []
    for w in words:
        expanded += w.split() if w.startswith("--") and " --" in w else [w]
    for i, w in enumerate(expanded):
        for flag in ("--node-labels", "--register-with-taints"):
            value = None
            if w.startswith(flag + "="):
                value = w[len(flag) + 1 :]
            elif w == flag and i + 1 < len(expanded):
                value = expanded[i + 1]
            if value is None:
                continue
            for item in filter(None, value.split(",")):
                if flag == "--node-labels":
                    k, _, v = item.partition("=")
                    labels[k] = v
                else:
                    kv, _, effect = item.rpartition(":")
                    k, _, v = kv.partition("=")
                    taints.append(Taint(k, v, effect))


def _bottlerocket(body: str, labels: dict[str, str], taints: list[Taint]) -> bool:
    try:
        data = tomllib.loads(body)
    except tomllib.TOMLDecodeError:
        return False
    k8s = (data.get("settings") or {}).get("kubernetes") or {}
    for k, v in (k8s.get("node-labels") or {}).items():
        labels[str(k)] = str(v)
    for k, vs in (k8s.get("node-taints") or {}).items():
        for v in vs if isinstance(vs, list) else [vs]:
            value, _, effect = str(v).rpartition(":")
            taints.append(Taint(str(k), value, effect))
    return bool(k8s.get("cluster-name") or k8s.get("api-server"))
