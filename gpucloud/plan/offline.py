"""Realistic offline answers for the data sources (invokes) GPU platform programs call."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gpucloud import catalog
from gpucloud.plan.regions import OFFLINE_ACCOUNT_ID, partition_of

_ADDON_VERSION_BASES = {
    "vpc-cni": "v1.20",
    "coredns": "v1.12",
    "kube-proxy": "v1.34",
    "eks-pod-identity-agent": "v1.3",
    "eks-node-monitoring-agent": "v1.4",
}


def fake_id(prefix: str, *parts: str, length: int = 17) -> str:
    """Deterministic AWS-shaped id, so two plans of the same program are identical."""
    digest = hashlib.sha256("/".join(parts).encode()).hexdigest()
    return f"{prefix}-{digest[:length]}"


class OfflineAnswers:
    """Answers invokes by token. Unanswered tokens are recorded so the plan can warn about them."""

    def __init__(self, region: str, stack_references: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.region = region
        self.stack_references = dict(stack_references or {})
        self.unanswered: list[str] = []
        self._handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "aws:index/getAvailabilityZones:getAvailabilityZones": self._azs,
            "aws:index/getAvailabilityZone:getAvailabilityZone": self._az,
            "aws:index/getCallerIdentity:getCallerIdentity": self._caller,
            "aws:index/getRegion:getRegion": self._region,
            "aws:index/getPartition:getPartition": self._partition,
            "aws:ssm/getParameter:getParameter": self._ssm_parameter,
            "aws:iam/getPolicyDocument:getPolicyDocument": self._policy_document,
            "aws:ec2/getInstanceType:getInstanceType": self._instance_type,
            "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings": self._offerings,
            "aws:ec2/getSubnets:getSubnets": self._subnets,
            "aws:ec2/getVpc:getVpc": self._vpc,
            "aws:ec2/getAmi:getAmi": self._ami,
            "aws:eks/getClusterAuth:getClusterAuth": self._cluster_auth,
            "aws:eks/getAddonVersion:getAddonVersion": self._addon_version,
            "kubernetes:helm:template": self._helm_template,
            "kubernetes:yaml:decode": self._yaml_decode,
            "kubernetes:kustomize:directory": self._kustomize_directory,
        }
        # A data source the provider would refuse (a chart that is not pinned, a kustomization that does not
        # build): the plan stops with this message rather than a traceback from inside the SDK.
        self.fatal: str | None = None
        self.warnings: list[str] = []
        # Data sources answered from their SDK result type alone (invoke_shapes): placeholders, said so.
        self.generic: list[str] = []
        # A chart nothing vendors is bad input where the stack enforces the charts lock (gpucloud.plan.options);
        # elsewhere its objects are left out of the plan, with a warning.
        self.strict_charts = True

    def answer(self, token: str, args: dict[str, Any]) -> dict[str, Any]:
        handler = self._handlers.get(token)
        if handler is None:
            from gpucloud.plan.invoke_shapes import generic_answer

            generic = generic_answer(token, args, self.region)
            if generic is not None:
                if token not in self.generic:
                    self.generic.append(token)
                return generic
            if token not in self.unanswered:
                self.unanswered.append(token)
            return {}
        try:
            return handler(args)
        except OfflineAnswerError as exc:
            self.fatal = self.fatal or str(exc)
            raise

    def _helm_template(self, args: dict[str, Any]) -> dict[str, Any]:
        """`helm.v3.Chart`: the provider renders the chart (`helm template`) and the SDK registers the objects."""
        opts = json.loads(str(args.get("jsonOpts") or "{}"))
        try:
            return {"result": render_chart_v3(opts)}
        except ChartNotVendored as exc:
            if self.strict_charts:
                raise
            self.warnings.append(unrendered_chart_warning(str(exc)))
            return {"result": []}

    def _kustomize_directory(self, args: dict[str, Any]) -> dict[str, Any]:
        """`kustomize.Directory` (v1): the provider runs kustomize and the SDK registers the objects."""
        from gpucloud.plan.k8s_components import ExpansionError, _kustomize

        directory = str(args.get("directory") or "")
        try:
            return {"result": _kustomize(directory, Path.cwd())}
        except ExpansionError as exc:
            raise OfflineAnswerError(f"kustomize.Directory {directory}: {exc}") from None

    def _region_of(self, args: Mapping[str, Any]) -> str:
        return str(args.get("region") or self.region)

    def _zones(self, region: str) -> list[tuple[str, str]]:
        from gpucloud.plan.invoke_shapes import availability_zones, known_region

        if not known_region(region):
            note = (
                f"availability zones of {region} are not in gpucloud/plan/availability_zones.json; the plan "
                "assumes three"
            )
            if note not in self.warnings:
                self.warnings.append(note)
        return availability_zones(region)

    def _azs(self, args: dict[str, Any]) -> dict[str, Any]:
        """getAvailabilityZones: the Region's zones from the shipped table, less excludeNames / excludeZoneIds
        (the `state` and opt-in filters keep them all: every listed zone is available and needs no opt-in)."""
        region = self._region_of(args)
        excluded = set(args.get("excludeNames") or []) | set(args.get("excludeZoneIds") or [])
        zones = [(n, z) for n, z in self._zones(region) if n not in excluded and z not in excluded]
        return {
            "id": region,
            "names": [n for n, _ in zones],
            "zoneIds": [z for _, z in zones],
            "groupNames": [region] * len(zones),
            "state": args.get("state"),
            "allAvailabilityZones": args.get("allAvailabilityZones"),
            "excludeNames": args.get("excludeNames"),
            "excludeZoneIds": args.get("excludeZoneIds"),
        }

    def _az(self, args: dict[str, Any]) -> dict[str, Any]:
        """getAvailabilityZone: one zone by name or AZ ID (else the Region's first)."""
        region = self._region_of(args)
        zones = self._zones(region)
        wanted = args.get("name") or args.get("zoneId")
        name, zone_id = next((z for z in zones if wanted in z), zones[0])
        if wanted and wanted not in (name, zone_id):
            name = str(args.get("name") or name)
            zone_id = str(args.get("zoneId") or zone_id)
        return {
            "id": name,
            "name": name,
            "zoneId": zone_id,
            "region": region,
            "nameSuffix": name.removeprefix(region),
            "groupName": region,
            "groupLongName": region,
            "networkBorderGroup": region,
            "optInStatus": "opt-in-not-required",
            "state": "available",
            "zoneType": "availability-zone",
            "parentZoneId": "",
            "parentZoneName": "",
            "allAvailabilityZones": args.get("allAvailabilityZones"),
        }

    def _caller(self, args: dict[str, Any]) -> dict[str, Any]:
        part, _ = partition_of(self.region)
        return {
            "id": OFFLINE_ACCOUNT_ID,
            "accountId": OFFLINE_ACCOUNT_ID,
            "arn": f"arn:{part}:iam::{OFFLINE_ACCOUNT_ID}:user/gpucloud-offline-plan",
            "userId": "AIDAGPUCLOUDOFFLINE",
        }

    def _region(self, args: dict[str, Any]) -> dict[str, Any]:
        region = self._region_of(args)
        _, suffix = partition_of(region)
        return {
            "id": region,
            "name": region,
            "region": region,
            "endpoint": f"ec2.{region}.{suffix}",
            "description": region,
        }

    def _partition(self, args: dict[str, Any]) -> dict[str, Any]:
        part, suffix = partition_of(self.region)
        return {
            "id": part,
            "partition": part,
            "dnsSuffix": suffix,
            "reverseDnsPrefix": ".".join(suffix.split(".")[::-1]),
        }

    def _ssm_parameter(self, args: dict[str, Any]) -> dict[str, Any]:
        name = str(args.get("name", ""))
        value: str
        if name.endswith("/image_id"):
            value = fake_id("ami", self.region, name)
        elif name.endswith("/release_version"):
            k8s = re.search(r"/optimized-ami/(\d+\.\d+)/", name)
            value = f"{k8s.group(1) if k8s else '1.34'}.4-20261120"
        elif name.endswith("/image_version"):
            value = "1.52.0-4b1e2d7a"
        else:
            value = f"offline-value-of:{name}"
        part, _ = partition_of(self.region)
        return {
            "id": name,
            "name": name,
            "arn": f"arn:{part}:ssm:{self.region}::parameter{name}",
            "type": "String",
            "value": value,
            "insecureValue": value,
            "version": 1.0,
            "withDecryption": args.get("withDecryption", True),
        }

    def _policy_document(self, args: dict[str, Any]) -> dict[str, Any]:
        statements = []
        for s in args.get("statements") or []:
            out: dict[str, Any] = {}
            if s.get("sid"):
                out["Sid"] = s["sid"]
            out["Effect"] = s.get("effect") or "Allow"
            for key, wire in (("actions", "Action"), ("notActions", "NotAction")):
                if s.get(key):
                    out[wire] = _one_or_many(sorted(s[key]))
            for key, wire in (("resources", "Resource"), ("notResources", "NotResource")):
                if s.get(key):
                    out[wire] = _one_or_many(sorted(s[key]))
            for key, wire in (("principals", "Principal"), ("notPrincipals", "NotPrincipal")):
                if s.get(key):
                    principal: dict[str, Any] = {}
                    for p in s[key]:
                        principal.setdefault(p["type"], []).extend(p.get("identifiers") or [])
                    if list(principal.items()) == [("*", ["*"])]:
                        out[wire] = "*"
                    else:
                        out[wire] = {k: _one_or_many(sorted(v)) for k, v in principal.items()}
            if s.get("conditions"):
                cond: dict[str, dict[str, Any]] = {}
                for c in s["conditions"]:
                    cond.setdefault(c["test"], {})[c["variable"]] = _one_or_many(list(c.get("values") or []))
                out["Condition"] = cond
            statements.append(out)
        doc = {"Version": args.get("version") or "2012-10-17", "Statement": statements}
        return {
            "id": fake_id("policy", json.dumps(doc, sort_keys=True)),
            "json": json.dumps(doc, indent=2),
            "minifiedJson": json.dumps(doc, separators=(",", ":")),
        }

    def _instance_type(self, args: dict[str, Any]) -> dict[str, Any]:
        name = str(args.get("instanceType", ""))
        spec = catalog.get_catalog().find(name)
        if spec is None:
            return {"id": name, "instanceType": name}
        gpus: list[dict[str, Any]] = []
        if spec.is_gpu:
            gpus = [
                {
                    "count": float(spec.accelerator_count),
                    "manufacturer": spec.manufacturer.upper()
                    if spec.manufacturer == "amd"
                    else spec.manufacturer.capitalize(),
                    "memorySize": float(round(spec.accelerator_memory_gib * 1024)),
                    "name": spec.accelerator,
                }
            ]
        return {
            "id": name,
            "instanceType": name,
            "defaultVcpus": float(spec.vcpu),
            "memorySize": float(round(spec.memory_gib * 1024)),
            "efaSupported": spec.efa_supported,
            "maximumNetworkCards": float(spec.network_cards),
            "maximumNetworkInterfaces": float(max(spec.network_cards, 1) * 2),
            "gpuses": gpus,
            "totalGpuMemory": float(sum(g["memorySize"] * g["count"] for g in gpus)),
            "instanceStorageSupported": spec.has_instance_store,
            "totalInstanceStorage": float(spec.local_nvme_gb),
            "supportedUsagesClasses": [c for c, ok in (("on-demand", spec.on_demand), ("spot", spec.spot)) if ok],
        }

    def _offerings(self, args: dict[str, Any]) -> dict[str, Any]:
        types: list[str] = []
        for f in args.get("filters") or []:
            if f.get("name") == "instance-type":
                types.extend(f.get("values") or [])
        location_type = args.get("locationType") or "region"
        zones = [n for n, _ in self._zones(self.region)] if location_type == "availability-zone" else [self.region]
        return {
            "id": self.region,
            "instanceTypes": [t for t in types for _ in zones],
            "locations": [z for _ in types for z in zones],
            "locationTypes": [location_type for _ in types for _ in zones],
        }

    def _subnets(self, args: dict[str, Any]) -> dict[str, Any]:
        key = json.dumps(args, sort_keys=True, default=str)
        return {"id": self.region, "ids": [fake_id("subnet", key, str(i)) for i in range(3)]}

    def _vpc(self, args: dict[str, Any]) -> dict[str, Any]:
        vpc_id = str(args.get("id") or fake_id("vpc", json.dumps(args, sort_keys=True, default=str)))
        return {
            "id": vpc_id,
            "cidrBlock": "10.0.0.0/16",
            "arn": f"arn:aws:ec2:{self.region}:{OFFLINE_ACCOUNT_ID}:vpc/{vpc_id}",
        }

    def _ami(self, args: dict[str, Any]) -> dict[str, Any]:
        ami = fake_id("ami", self.region, json.dumps(args, sort_keys=True, default=str))
        return {"id": ami, "imageId": ami, "architecture": "x86_64", "name": "offline-ami"}

    def _cluster_auth(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"id": args.get("name"), "name": args.get("name"), "token": "k8s-aws-v1.offline-plan-token"}

    def _addon_version(self, args: dict[str, Any]) -> dict[str, Any]:
        # Shaped like EKS add-on versions; the minor follows the Kubernetes version so plans differ per version.
        addon = str(args.get("addonName", ""))
        k8s_minor = str(args.get("kubernetesVersion") or "1.34").split(".")[-1]
        base = _ADDON_VERSION_BASES.get(addon, "v1.0")
        version = f"{base}.{k8s_minor}-eksbuild.1"
        return {
            "id": addon,
            "addonName": addon,
            "kubernetesVersion": args.get("kubernetesVersion"),
            "mostRecent": args.get("mostRecent"),
            "version": version,
        }

    def _yaml_decode(self, args: dict[str, Any]) -> dict[str, Any]:
        import yaml

        return {"result": [d for d in yaml.safe_load_all(str(args.get("text", ""))) if d is not None]}


class OfflineAnswerError(Exception):
    """A data source the provider would fail; the plan reports it as bad input."""


class ChartNotVendored(OfflineAnswerError):
    """A chart the offline plan cannot render because nothing vendors it (a preview would fetch it)."""


def unrendered_chart_warning(reason: str) -> str:
    return (
        f"{reason}: the offline plan cannot render it, so its objects are not in the plan (a preview fetches the "
        "chart; vendor it, or set gpucloud:enforceChartLock: true to make this an error)"
    )


_TEST_HOOKS = {"test", "test-success", "test-failure"}


def render_chart_v3(opts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Objects the provider's `kubernetes:helm:template` returns for helm.v3.Chart options (snake_case JSON)."""
    from gpucloud.charts.helm import HelmError, helm_template
    from gpucloud.charts.resolve import ChartNotPinned, resolve_chart_dir

    fetch = opts.get("fetch_opts") or {}
    label = str(opts.get("path") or opts.get("chart") or "?")
    try:
        if opts.get("path"):
            chart_dir = Path(str(opts["path"]))
            chart_dir = chart_dir if chart_dir.is_absolute() else Path.cwd() / chart_dir
            if not (chart_dir / "Chart.yaml").is_file():
                raise ChartNotPinned(f"{opts['path']} is not a chart directory (no Chart.yaml)")
        else:
            repo = opts.get("repo") or fetch.get("repo")
            chart_dir = resolve_chart_dir(
                str(opts.get("chart") or ""), opts.get("version") or fetch.get("version"), repo
            )
        objs = helm_template(
            chart_dir,
            release=str(opts.get("release_name") or "release"),
            namespace=str(opts.get("namespace") or "default"),
            values=opts.get("values") or {},
            kube_version=str(opts.get("kube_version") or "1.34.0"),
            include_crds=not opts.get("skip_crd_rendering"),
            api_versions=list(opts.get("api_versions") or []),
        )
    except ChartNotPinned as exc:
        raise ChartNotVendored(f"helm.v3.Chart {label}: {exc}") from None
    except HelmError as exc:
        raise OfflineAnswerError(f"helm.v3.Chart {label}: {exc}") from None
    if opts.get("disable_hooks"):
        objs = [o for o in objs if not _hooks(o)]
    elif not opts.get("include_test_hook_resources"):
        objs = [o for o in objs if not _TEST_HOOKS & _hooks(o)]
    return objs


def _hooks(obj: Mapping[str, Any]) -> set[str]:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    return {h.strip() for h in str(annotations.get("helm.sh/hook", "")).split(",") if h.strip()}


def _one_or_many(values: list[Any]) -> Any:
    return values[0] if len(values) == 1 else values
