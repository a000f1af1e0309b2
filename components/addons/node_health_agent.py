"""The node health gate's agent: runs in the health DaemonSet's `agent` container (standard library only, Python 3.11+).

The checker containers of the same pod (DCGM diagnostic, EFA check) write one verdict file each into a shared
directory: `pass` or `fail: <why>`. This agent waits for every expected verdict, then acts on the node it runs on:

- all pass, first time: remove the startup taint and label the node gpucloud.io/health=passed;
- any fail (or a fatal XID reported for the node by DCGM through Prometheus): cordon it, label it
  gpucloud.io/health=failed, record the reason in an annotation and a Warning Event, set the node condition
  AcceleratedHardwareReady=False (what EKS node auto-repair and Karpenter NodeRepair act on) and, when
  replacement is on, mark the EC2 instance Unhealthy in its Auto Scaling group (autoscaling:SetInstanceHealth,
  signed with the Pod Identity credentials) so the group replaces it.

It keeps watching: checkers rewrite their verdicts periodically and a later failure quarantines the node.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import os
import ssl
import sys
import time
import urllib.parse
import urllib.request
from typing import Any

API = "https://kubernetes.default.svc"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
HEALTH_LABEL = "gpucloud.io/health"
REASON_ANNOTATION = "gpucloud.io/health-reason"
CONDITION = "AcceleratedHardwareReady"


def verdicts(status_dir: str, checks: list[str]) -> dict[str, str] | None:
    """Each expected check's verdict, or None while one is still missing."""
    out = {}
    for check in checks:
        path = os.path.join(status_dir, check)
        if not os.path.exists(path):
            return None
        with open(path, encoding="utf-8") as fh:
            out[check] = fh.read().strip()
    return out


def failures(results: dict[str, str]) -> list[str]:
    """The checks that did not pass, with their reasons ("gpu: dcgmi diag -r 2 failed ...")."""
    return [f"{check}: {verdict}" for check, verdict in sorted(results.items()) if verdict != "pass"]


def fatal_xids(prometheus_response: dict[str, Any], fatal: set[int]) -> list[int]:
    """Fatal XID codes in a Prometheus instant-query response for DCGM_FI_DEV_XID_ERRORS."""
    found = set()
    for sample in (prometheus_response.get("data") or {}).get("result") or []:
        try:
            code = int(float(sample["value"][1]))
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        if code in fatal:
            found.add(code)
    return sorted(found)


def untaint_patch(node: dict[str, Any], taint_key: str) -> list[dict[str, Any]]:
    """JSON patch removing the startup taint; `test` first, so a concurrent taint change makes it fail, not clobber."""
    taints = (node.get("spec") or {}).get("taints") or []
    kept = [t for t in taints if t.get("key") != taint_key]
    if len(kept) == len(taints):
        return []
    return [
        {"op": "test", "path": "/spec/taints", "value": taints},
        {"op": "replace", "path": "/spec/taints", "value": kept},
    ]


def passed_patch() -> dict[str, Any]:
    return {"metadata": {"labels": {HEALTH_LABEL: "passed"}, "annotations": {REASON_ANNOTATION: None}}}


def quarantine_patch(reason: str) -> dict[str, Any]:
    return {
        "metadata": {"labels": {HEALTH_LABEL: "failed"}, "annotations": {REASON_ANNOTATION: reason[:1000]}},
        "spec": {"unschedulable": True},
    }


def condition_patch(reason: str, now: str) -> dict[str, Any]:
    return {
        "status": {
            "conditions": [
                {
                    "type": CONDITION,
                    "status": "False",
                    "reason": "GpucloudHealthCheckFailed",
                    "message": reason[:1000],
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            ]
        }
    }


def instance_id(provider_id: str) -> str | None:
    """The EC2 instance id of an EKS node's spec.providerID (aws:///us-east-1a/i-0123...)."""
    last = provider_id.rsplit("/", 1)[-1]
    return last if provider_id.startswith("aws://") and last.startswith("i-") else None


def sigv4_headers(
    method: str,
    url: str,
    body: str,
    region: str,
    service: str,
    creds: dict[str, str],
    now: datetime.datetime,
) -> dict[str, str]:
    """AWS Signature Version 4 headers for a form-encoded query API call (AWS General Reference, "Signing AWS
    API requests")."""
    parsed = urllib.parse.urlparse(url)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    day = now.strftime("%Y%m%d")
    headers = {
        "content-type": "application/x-www-form-urlencoded; charset=utf-8",
        "host": parsed.netloc,
        "x-amz-date": amz_date,
    }
    if creds.get("Token"):
        headers["x-amz-security-token"] = creds["Token"]
    signed = ";".join(sorted(headers))
    canonical = "\n".join(
        [
            method,
            parsed.path or "/",
            parsed.query,
            "".join(f"{k}:{headers[k]}\n" for k in sorted(headers)),
            signed,
            hashlib.sha256(body.encode()).hexdigest(),
        ]
    )
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + creds["SecretAccessKey"]).encode()
    for part in (day, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={creds['AccessKeyId']}/{scope}, SignedHeaders={signed}, Signature={signature}"
    )
    return headers


def set_instance_health_body(instance: str) -> str:
    return urllib.parse.urlencode(
        {
            "Action": "SetInstanceHealth",
            "Version": "2011-01-01",
            "InstanceId": instance,
            "HealthStatus": "Unhealthy",
            "ShouldRespectGracePeriod": "false",
        }
    )


# -- I/O (exercised on a cluster; the decisions above are unit-tested) -------------------------------------------


def _kube(method: str, path: str, body: Any = None, content_type: str = "application/merge-patch+json") -> Any:
    with open(os.path.join(SA_DIR, "token"), encoding="utf-8") as fh:
        token = fh.read().strip()
    ctx = ssl.create_default_context(cafile=os.path.join(SA_DIR, "ca.crt"))
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(API + path, data=data, method=method)
    req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", content_type)
    with urllib.request.urlopen(req, context=ctx, timeout=30) as resp:
        return json.loads(resp.read() or b"{}")


def _event(node: str, uid: str, reason: str, message: str, namespace: str) -> None:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    _kube(
        "POST",
        f"/api/v1/namespaces/{namespace}/events",
        {
            "metadata": {"generateName": f"{node}.health-"},
            "involvedObject": {"kind": "Node", "name": node, "uid": uid},
            "reason": reason,
            "message": message[:1000],
            "type": "Warning" if reason != "HealthCheckPassed" else "Normal",
            "source": {"component": "gpucloud-node-health", "host": node},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        },
        "application/json",
    )


def _pod_identity_credentials() -> dict[str, str]:
    with open(os.environ["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"], encoding="utf-8") as fh:
        token = fh.read().strip()
    req = urllib.request.Request(os.environ["AWS_CONTAINER_CREDENTIALS_FULL_URI"])
    req.add_header("Authorization", token)
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def _mark_unhealthy(instance: str, region: str) -> str:
    body = set_instance_health_body(instance)
    url = f"https://autoscaling.{region}.amazonaws.com/"
    headers = sigv4_headers(
        "POST",
        url,
        body,
        region,
        "autoscaling",
        _pod_identity_credentials(),
        datetime.datetime.now(datetime.UTC),
    )
    req = urllib.request.Request(url, data=body.encode(), method="POST", headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return f"SetInstanceHealth {instance}: HTTP {resp.status}"
    except urllib.error.HTTPError as err:  # e.g. a Karpenter node: no Auto Scaling group to mark
        return f"SetInstanceHealth {instance}: HTTP {err.code} {err.read()[:300]!r}"


def _xids(node: str, prometheus: str, fatal: set[int]) -> list[int]:
    query = f'max_over_time(DCGM_FI_DEV_XID_ERRORS{{Hostname="{node}"}}[15m])'
    url = f"{prometheus.rstrip('/')}/api/v1/query?{urllib.parse.urlencode({'query': query})}"
    try:
        with urllib.request.urlopen(url, timeout=15) as resp:
            return fatal_xids(json.loads(resp.read()), fatal)
    except (OSError, ValueError):
        return []


def main() -> int:  # pragma: no cover - runs in the cluster
    node = os.environ["NODE_NAME"]
    checks = [c for c in os.environ.get("CHECKS", "gpu").split(",") if c]
    status_dir = os.environ.get("STATUS_DIR", "/status")
    taint_key = os.environ["TAINT_KEY"]
    namespace = os.environ.get("POD_NAMESPACE", "default")
    region = os.environ.get("AWS_REGION", "")
    replace = os.environ.get("REPLACE_FAILED") == "true"
    prometheus = os.environ.get("PROMETHEUS_URL", "")
    fatal = {int(x) for x in os.environ.get("FATAL_XIDS", "").split(",") if x}
    gated = False
    quarantined = False
    while True:
        results = verdicts(status_dir, checks)
        bad = failures(results) if results is not None else []
        if prometheus and fatal:
            codes = _xids(node, prometheus, fatal)
            if codes:
                bad.append(f"dcgm: fatal XID {codes}")
        node_obj = _kube("GET", f"/api/v1/nodes/{node}")
        uid = node_obj["metadata"]["uid"]
        if bad and not quarantined:
            reason = "; ".join(bad)
            _kube("PATCH", f"/api/v1/nodes/{node}", quarantine_patch(reason))
            now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            _kube(
                "PATCH",
                f"/api/v1/nodes/{node}/status",
                condition_patch(reason, now),
                "application/strategic-merge-patch+json",
            )
            _event(node, uid, "HealthCheckFailed", reason, namespace)
            if replace:
                instance = instance_id((node_obj.get("spec") or {}).get("providerID", ""))
                if instance:
                    print(_mark_unhealthy(instance, region), flush=True)
            print(f"quarantined {node}: {reason}", flush=True)
            quarantined = True
        elif results is not None and not bad and not gated:
            patch = untaint_patch(node_obj, taint_key)
            if patch:
                _kube("PATCH", f"/api/v1/nodes/{node}", patch, "application/json-patch+json")
            _kube("PATCH", f"/api/v1/nodes/{node}", passed_patch())
            _event(node, uid, "HealthCheckPassed", f"checks passed: {', '.join(checks)}", namespace)
            print(f"{node} passed {checks}", flush=True)
            gated = True
        time.sleep(30)


if __name__ == "__main__":
    sys.exit(main())
