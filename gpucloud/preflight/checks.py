"""`gpucloud preflight`: checks a stack spec against the target account and region before `pulumi up`."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from gpucloud import versions
from gpucloud.aws import (
    AwsAccessError,
    AwsBadAnswerError,
    AwsUnavailableError,
    ClientFactory,
    api_error_text,
    aws_errors,
    check_region,
    is_access_denied,
)
from gpucloud.catalog import get_catalog
from gpucloud.spec import NodePoolSpec, PlatformSpec

Status = Literal["pass", "warn", "fail"]
SCHEMA: Final = "gpucloud.preflight/v1"
# Placement scores run 1-10; below this a spot pool of that size is unlikely to be fulfilled.
SPOT_SCORE_OK: Final = 5
_ON_DEMAND_QUOTA: Final = re.compile(r"^Running On-Demand (?P<group>.+) instances$")
_SPOT_QUOTA: Final = re.compile(r"^All (?P<group>.+) Spot Instance Requests$")


@dataclass(frozen=True, slots=True)
class Check:
    check: str
    subject: str
    status: Status
    message: str

    def to_json(self) -> dict[str, str]:
        return {"check": self.check, "subject": self.subject, "status": self.status, "message": self.message}


@dataclass(frozen=True, slots=True)
class Quota:
    name: str
    code: str
    value: float
    tokens: frozenset[str]


def _quota_tokens(group: str) -> frozenset[str]:
    """'P4, P3 and P2' -> {P4, P3, P2}; 'Standard (A, C, D, H, I, M, R, T, Z)' -> {A, C, ..., Z}; 'G and VT'."""
    inner = re.search(r"\(([^)]*)\)", group)
    text = inner.group(1) if inner else group
    return frozenset(t.strip().upper() for t in re.split(r",|\band\b", text) if t.strip())


def _family_tokens(instance_type: str) -> tuple[str, str]:
    """('P5', 'P') for p5en.48xlarge; ('TRN2', 'TRN') for trn2.48xlarge; ('M7', 'M') for m7i.xlarge."""
    m = re.match(r"^([a-z]+)(\d*)", instance_type)
    assert m is not None
    letters, digits = m.group(1), m.group(2)
    cls = letters.upper()
    if cls not in ("TRN", "INF", "DL", "VT"):
        cls = cls[0]
    return f"{cls}{digits}", cls


def parse_quotas(quotas: Iterable[dict[str, Any]]) -> dict[str, list[Quota]]:
    """ListServiceQuotas(ec2) entries grouped by market ('on-demand' / 'spot'), matched by NAME, not code."""
    out: dict[str, list[Quota]] = {"on-demand": [], "spot": []}
    for q in quotas:
        name = str(q.get("QuotaName", ""))
        for market, pattern in (("on-demand", _ON_DEMAND_QUOTA), ("spot", _SPOT_QUOTA)):
            m = pattern.match(name)
            if m:
                tokens = _quota_tokens(m.group("group"))
                out[market].append(Quota(name, str(q.get("QuotaCode")), float(q.get("Value", 0)), tokens))
    return out


def quota_for(quotas: dict[str, list[Quota]], market: str, instance_type: str) -> Quota | None:
    """The most specific quota: one naming the generation (P5 spot has its own), else the class (P, G, Trn)."""
    generation, cls = _family_tokens(instance_type)
    candidates = quotas.get(market, [])
    for q in candidates:
        if generation in q.tokens:
            return q
    for q in candidates:
        if cls in q.tokens:
            return q
    return None


def pool_markets(pool: NodePoolSpec) -> dict[str, int]:
    """Nodes per market at max size: reserved first, then the On-Demand base, then the split above it."""
    reserved = pool.reserved_count
    kind = pool.capacity.reserved.kind if pool.capacity.reserved else None
    above = max(pool.max_size - reserved - pool.capacity.on_demand_base, 0)
    od_above = math.ceil(above * pool.capacity.on_demand_percentage_above_base / 100)
    on_demand = pool.capacity.on_demand_base + od_above + (reserved if kind == "odcr" else 0)
    return {
        "on-demand": on_demand,
        "spot": above - od_above,
        "capacity-block": reserved if kind == "capacity-block" else 0,
    }


def ssm_parameter(pool: NodePoolSpec, spec: PlatformSpec) -> str:
    """The SSM parameter of the AMI release the pool pins (what the plan boots), never the `recommended` one: a
    missing parameter means that release is not published in the region (or the pin is wrong)."""
    minor = pool.kubernetes_version or spec.cluster.kubernetes_version
    release = spec.cluster.ami_release(pool.ami.family, pool.kubernetes_version, pool.ami.release)
    variant = "neuron" if any(not s.is_gpu for s in pool.specs) else "nvidia"
    return versions.ami_image_parameter(pool.ami.family, variant, minor, release)


class Preflight:
    def __init__(self, spec: PlatformSpec, clients: ClientFactory) -> None:
        self.spec = spec
        self.region = check_region(spec.region)
        self.clients = clients
        self.checks: list[Check] = []
        self._client_cache: dict[str, Any] = {}
        self._vcpu_cache: dict[str, int] = {}

    def client(self, service: str) -> Any:
        if service not in self._client_cache:
            self._client_cache[service] = self.clients(service, self.region)
        return self._client_cache[service]

    def vcpus(self, instance_type: str) -> int:
        spec = get_catalog().find(instance_type)
        if spec is not None:
            return spec.vcpu
        if instance_type not in self._vcpu_cache:
            answer = self.client("ec2").describe_instance_types(InstanceTypes=[instance_type])
            info = answer.get("InstanceTypes", [{}])[0].get("VCpuInfo", {})
            self._vcpu_cache[instance_type] = int(info.get("DefaultVCpus", 0))
        return self._vcpu_cache[instance_type]

    def add(self, check: str, subject: str, status: Status, message: str) -> None:
        self.checks.append(Check(check, subject, status, message))

    def guarded(self, check: str, subject: str, fn: Any) -> None:
        """Run one check; AccessDenied stops the run (exit 2), so does AWS staying unavailable after the retries
        (exit 6, AwsUnavailableError); any other API error, or an answer that is not an AWS response, is a
        warning."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            with aws_errors(f"preflight {check}"):
                fn()
        except AwsBadAnswerError as exc:
            self.add(check, subject, "warn", f"not checked: {exc}")
        except (AwsAccessError, AwsUnavailableError):
            raise
        except ClientError as exc:
            if is_access_denied(exc):
                raise
            self.add(check, subject, "warn", f"not checked: {exc.operation_name} failed ({api_error_text(exc)})")
        except (BotoCoreError, NotImplementedError) as exc:
            self.add(check, subject, "warn", f"not checked: {type(exc).__name__}: {exc}")

    # ---- checks ------------------------------------------------------------------------------------------
    def identity(self) -> str:
        with aws_errors("preflight credentials", every_api_error=True):
            ident = self.client("sts").get_caller_identity()
        account = str(ident.get("Account"))
        self.add("credentials", account, "pass", f"calling as {ident.get('Arn')}")
        return account

    def quotas(self) -> None:
        pager = self.client("service-quotas").get_paginator("list_service_quotas")
        raw: list[dict[str, Any]] = []
        for page in pager.paginate(ServiceCode="ec2"):
            raw.extend(page.get("Quotas", []))
        quotas = parse_quotas(raw)
        needs: dict[tuple[str, str], dict[str, Any]] = {}
        sys_group = self.spec.cluster.system_node_group
        demands: list[tuple[str, str, str, int]] = [
            ("system", "on-demand", sys_group.instance_type, sys_group.max_size)
        ]
        for pool in self.spec.node_pools:
            widest = max(pool.instance_types, key=self.vcpus)
            for market, nodes in pool_markets(pool).items():
                if market != "capacity-block" and nodes:
                    demands.append((pool.name, market, widest, nodes))
        for pool_name, market, itype, nodes in demands:
            quota = quota_for(quotas, market, itype)
            vcpus = nodes * self.vcpus(itype)
            if quota is None:
                self.add("quota", f"{pool_name} ({market})", "warn", f"no {market} quota found by name for {itype}")
                continue
            entry = needs.setdefault((market, quota.code), {"quota": quota, "vcpus": 0, "pools": []})
            entry["vcpus"] += vcpus
            entry["pools"].append(f"{pool_name}={nodes}x{itype}")
        for (_market, code), entry in needs.items():
            quota = entry["quota"]
            need, have = entry["vcpus"], quota.value
            subject = f"{quota.name} ({code})"
            detail = f"need {need} vCPUs at max size ({', '.join(entry['pools'])}), quota {have:g} in {self.region}"
            if need <= have:
                self.add("quota", subject, "pass", f"{detail}; current usage is not subtracted")
            else:
                self.add(
                    "quota",
                    subject,
                    "fail",
                    f"{detail}: short by {need - have:g} vCPUs; request an increase in Service Quotas ({code})",
                )

    def offerings(self) -> None:
        ec2 = self.client("ec2")
        for pool in self.spec.node_pools:
            azs = pool.availability_zones or self.spec.availability_zones
            offered: set[tuple[str, str]] = set()
            pager = ec2.get_paginator("describe_instance_type_offerings")
            for page in pager.paginate(
                LocationType="availability-zone",
                Filters=[{"Name": "instance-type", "Values": pool.instance_types}, {"Name": "location", "Values": azs}],
            ):
                for o in page.get("InstanceTypeOfferings", []):
                    offered.add((o["InstanceType"], o["Location"]))
            for itype in pool.instance_types:
                missing = [az for az in azs if (itype, az) not in offered]
                subject = f"{pool.name}: {itype}"
                if not missing:
                    self.add("offering", subject, "pass", f"offered in {', '.join(azs)}")
                elif len(missing) == len(azs):
                    self.add("offering", subject, "fail", f"not offered in any of the pool's AZs ({', '.join(azs)})")
                else:
                    self.add("offering", subject, "warn", f"not offered in {', '.join(missing)}; nodes land elsewhere")

    def spot_scores(self) -> None:
        ec2 = self.client("ec2")
        zone_names: dict[str, str] | None = None
        for pool in self.spec.node_pools:
            spot_nodes = pool_markets(pool)["spot"]
            if not spot_nodes:
                continue
            types = list(pool.instance_types)
            if len(types) < 3:
                # One or two types always score low; score the pool's GPU shape, which spot diversity can use.
                # The same GPU shape first, then the same accelerator in other sizes.
                catalog = get_catalog()
                accel = catalog.get(types[0]).accelerator
                extra = catalog.same_gpu_shape(types[0]) + [s.instance_type for s in catalog if s.accelerator == accel]
                for t in extra:
                    if len(types) >= 3:
                        break
                    if t not in types:
                        types.append(t)
            if zone_names is None:
                zones = ec2.describe_availability_zones().get("AvailabilityZones", [])
                zone_names = {z["ZoneId"]: z["ZoneName"] for z in zones}
            answer = ec2.get_spot_placement_scores(
                InstanceTypes=types,
                TargetCapacity=spot_nodes,
                TargetCapacityUnitType="units",
                SingleAvailabilityZone=True,
                RegionNames=[self.region],
            )
            azs = set(pool.availability_zones or self.spec.availability_zones)
            scores = {
                zone_names.get(s.get("AvailabilityZoneId", ""), s.get("AvailabilityZoneId", "")): int(s["Score"])
                for s in answer.get("SpotPlacementScores", [])
            }
            in_pool = {az: sc for az, sc in scores.items() if az in azs}
            subject = f"{pool.name}: {spot_nodes} spot x {'/'.join(types)}"
            if not in_pool:
                self.add("spot-score", subject, "warn", "no placement score for the pool's AZs")
                continue
            best_az, best = max(in_pool.items(), key=lambda kv: kv[1])
            status: Status = "pass" if best >= SPOT_SCORE_OK else "warn"
            self.add(
                "spot-score",
                subject,
                status,
                f"best score {best}/10 in {best_az}; per AZ {dict(sorted(in_pool.items()))}",
            )

    def reservations(self) -> None:
        from botocore.exceptions import ClientError

        ec2 = self.client("ec2")
        for pool in self.spec.node_pools:
            reserved = pool.capacity.reserved
            if reserved is None or not reserved.capacity_reservation_ids:
                continue
            azs = pool.availability_zones or self.spec.availability_zones
            for cr_id in reserved.capacity_reservation_ids:
                subject = f"{pool.name}: {cr_id}"
                try:
                    found = ec2.describe_capacity_reservations(CapacityReservationIds=[cr_id]).get(
                        "CapacityReservations", []
                    )
                except ClientError as exc:
                    if exc.response.get("Error", {}).get("Code", "").startswith("InvalidCapacityReservationId"):
                        found = []
                    else:
                        raise
                if not found:
                    self.add("reservation", subject, "fail", f"not found in {self.region}{self._block_hint(pool)}")
                    continue
                cr = found[0]
                problems: list[str] = []
                state = cr.get("State")
                if state not in ("active", "scheduled", "payment-pending"):
                    problems.append(f"state is {state}")
                if cr.get("InstanceType") not in pool.instance_types:
                    problems.append(
                        f"instance type {cr.get('InstanceType')} is not in the pool's {pool.instance_types}"
                    )
                if cr.get("AvailabilityZone") not in azs:
                    problems.append(f"AZ {cr.get('AvailabilityZone')} is not the pool's {azs}")
                is_block = cr.get("ReservationType") == "capacity-block"
                if is_block != (reserved.kind == "capacity-block"):
                    problems.append(
                        f"it is a {'Capacity Block' if is_block else 'plain ODCR'}, the pool says {reserved.kind}"
                    )
                detail = (
                    f"{cr.get('InstanceType')} x{cr.get('TotalInstanceCount')} in {cr.get('AvailabilityZone')}, "
                    f"state {state}" + (f", ends {cr.get('EndDate')}" if cr.get("EndDate") else "")
                )
                if problems:
                    self.add("reservation", subject, "fail", f"{detail}: {'; '.join(problems)}")
                elif int(cr.get("TotalInstanceCount", 0)) < reserved.count:
                    self.add(
                        "reservation", subject, "warn", f"{detail}: holds fewer than the {reserved.count} nodes planned"
                    )
                else:
                    self.add("reservation", subject, "pass", detail)

    def _block_hint(self, pool: NodePoolSpec) -> str:
        """For a missing Capacity Block: what a 1-day block of the same size would cost now."""
        reserved = pool.capacity.reserved
        if reserved is None or reserved.kind != "capacity-block":
            return ""
        try:
            offers = (
                self.client("ec2")
                .describe_capacity_block_offerings(
                    InstanceType=pool.instance_types[0], InstanceCount=reserved.count, CapacityDurationHours=24
                )
                .get("CapacityBlockOfferings", [])
            )
        except Exception:  # a hint only; the missing block is reported either way
            return ""
        if not offers:
            return "; no 1-day Capacity Block offerings for that size right now"
        cheapest = min(offers, key=lambda o: float(o.get("UpfrontFee", "inf")))
        return (
            f"; {len(offers)} 1-day offerings available, cheapest {cheapest.get('UpfrontFee')} "
            f"{cheapest.get('CurrencyCode', 'USD')} up front in {cheapest.get('AvailabilityZone')} "
            f"starting {cheapest.get('StartDate')}"
        )

    def amis(self) -> None:
        wanted: dict[str, list[str]] = {}
        for pool in self.spec.node_pools:
            if pool.ami.id:
                self.add("ami", pool.name, "pass", f"explicit AMI {pool.ami.id} (SSM not consulted)")
                continue
            wanted.setdefault(ssm_parameter(pool, self.spec), []).append(pool.name)
        if not wanted:
            return
        answer = self.client("ssm").get_parameters(Names=list(wanted))
        found = {p["Name"]: p.get("Value") for p in answer.get("Parameters", [])}
        for name, pools in wanted.items():
            subject = f"{', '.join(pools)}: {name}"
            if name in found:
                self.add("ami", subject, "pass", f"resolves to {found[name]}")
            else:
                self.add(
                    "ami",
                    subject,
                    "fail",
                    f"the pinned AMI release is not published in {self.region} (SSM parameter missing); pin a "
                    "release AWS published there (cluster.amiReleases or the pool's ami.release)",
                )

    def run(self) -> dict[str, Any]:
        account = self.identity()
        self.guarded("quota", "ec2 service quotas", self.quotas)
        self.guarded("offering", "instance type offerings", self.offerings)
        self.guarded("spot-score", "spot placement scores", self.spot_scores)
        self.guarded("reservation", "capacity reservations", self.reservations)
        self.guarded("ami", "SSM AMI parameters", self.amis)
        counts = {s: sum(1 for c in self.checks if c.status == s) for s in ("pass", "warn", "fail")}
        return {
            "schema": SCHEMA,
            "stack": self.spec.name,
            "region": self.region,
            "account": account,
            "checks": [c.to_json() for c in self.checks],
            "summary": counts,
            "ok": counts["fail"] == 0,
        }


def run_preflight(spec: PlatformSpec, clients: ClientFactory) -> dict[str, Any]:
    return Preflight(spec, clients).run()
