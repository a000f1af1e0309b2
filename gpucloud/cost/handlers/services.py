"""Everything else the engine prices by the hour or month: FSx for Lustre, the EKS control plane (standard or
extended support), EKS add-ons billed by use, NAT gateways, Elastic IPs, interface endpoints, KMS keys, EBS
volumes."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from gpucloud.cost.pricer import Pricer, _count, _get, _is_unknown, prices
from gpucloud.fleet import types as T
from gpucloud.prices import rates


@prices(T.LUSTRE)
def lustre(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    capacity = _count(_get(inputs, "storageCapacity"))
    deployment = _get(inputs, "deploymentType", "SCRATCH_1")
    storage = _get(inputs, "storageType", "SSD")
    if capacity is None or _is_unknown(deployment) or _is_unknown(storage):
        pricer.skip(r, "storageCapacity/deploymentType are unknown at preview")
        return
    throughput: int | None = None
    if str(deployment).startswith("PERSISTENT"):
        throughput = _count(_get(inputs, "perUnitStorageThroughput"))
        if throughput is None:
            pricer.skip(r, f"{deployment} needs perUnitStorageThroughput (MB/s/TiB) to be priced")
            return
    retention = _count(_get(inputs, "automaticBackupRetentionDays"))
    if retention:
        pricer.skip(
            r,
            f"usage-billed: automatic daily backups kept {retention} days are billed by backup storage "
            f"({pricer.usage_rate(rates.FSX_BACKUP_GB_MONTH)}, incremental after the first full backup)",
            rates.unit_of(rates.FSX_BACKUP_GB_MONTH),
        )
    tier_key = (str(deployment), throughput, str(storage))
    if tier_key not in rates.FSX_LUSTRE_TIERS:
        tier = f" at {throughput} MB/s/TiB" if throughput else ""
        pricer.skip(r, f"no FSx for Lustre rate for {deployment} {storage}{tier}")
        return
    key = rates.fsx_lustre_key(*tier_key)
    rate = pricer.service_rate(r, key, rates.describe(key))
    if rate is not None:
        pricer.add(
            r,
            pricing="storage",
            quantity=capacity,
            max_quantity=capacity,
            unit_price=rate.usd,
            unit="GiB-month",
            rate=rate,
        )


@prices(T.EKS_CLUSTER)
def eks_cluster(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    version = _get(inputs, "version")
    # Only STANDARD opts out of extended support: absent, unknown or EXTENDED all mean EKS's default, EXTENDED.
    support = _get(inputs, "upgradePolicy.supportType")
    name = str(r.get("name"))
    log_types = _get(inputs, "enabledClusterLogTypes")
    if isinstance(log_types, list) and log_types:
        pricer.skip(
            r,
            f"usage-billed: control plane logs ({', '.join(str(x) for x in log_types)}) are billed by GB "
            f"ingested into CloudWatch Logs ({pricer.usage_rate(rates.CLOUDWATCH_LOGS_INGEST_GB)}) and stored",
            rates.unit_of(rates.CLOUDWATCH_LOGS_INGEST_GB),
        )
    if version is None:
        # A new cluster gets EKS's default version, always one in standard support that day; it stays there
        # (no upgrades but EKS's own) and moves into extended support within 14 months unless supportType
        # is STANDARD: the ceiling carries the extended rate.
        ceiling = rates.EKS_STANDARD if support == "STANDARD" else rates.EKS_EXTENDED
        pricer.add(
            r,
            pricing="fixed",
            quantity=1,
            max_quantity=round(ceiling.usd / rates.EKS_STANDARD.usd, 6),
            unit_price=rates.EKS_STANDARD.usd,
            unit="hour",
            source=f"{rates.EKS_STANDARD.source}; version: {rates.EKS_DEFAULT_VERSION_SOURCE}",
            as_of=rates.EKS_STANDARD.as_of,
        )
        if support != "STANDARD":
            pricer.warnings.append(
                f"{name}: no version given, so EKS picks its default version ({rates.EKS_DEFAULT_VERSION_SOURCE})"
                f"; priced at the standard-support rate ${rates.EKS_STANDARD.usd}/h, ceiling at the extended rate "
                f"${rates.EKS_EXTENDED.usd}/h once that version leaves standard support; pin `version`"
            )
        return
    if not isinstance(version, str) or _is_unknown(version):
        pricer.skip(r, "version is unknown at preview, so standard vs extended support is unknown")
        return
    rate = rates.EKS_STANDARD
    calendar = rates.EKS_CALENDAR.get(version)
    if support != "STANDARD" and rates.eks_in_extended_support(version, pricer.as_of):
        rate = rates.EKS_EXTENDED
    if calendar is not None:
        end_standard, end_extended = date.fromisoformat(calendar[1]), date.fromisoformat(calendar[2])
        horizon = pricer.as_of.toordinal() + rates.EKS_TIER_WARNING_DAYS
        if pricer.as_of <= end_standard and end_standard.toordinal() <= horizon:
            days = end_standard.toordinal() - pricer.as_of.toordinal()
            after = (
                f"the control plane goes from ${rates.EKS_STANDARD.usd}/h to ${rates.EKS_EXTENDED.usd}/h "
                f"(${rates.EKS_STANDARD.usd * rates.HOURS_PER_MONTH:,.0f} to "
                f"${rates.EKS_EXTENDED.usd * rates.HOURS_PER_MONTH:,.0f} a month)"
                if support != "STANDARD"
                else "upgradePolicy.supportType STANDARD: EKS upgrades the cluster automatically"
            )
            pricer.warnings.append(
                f"{name}: Kubernetes {version} leaves EKS standard support on {calendar[1]} ({days} days after "
                f"{pricer.as_of.isoformat()}): {after} ({rates.EKS_CALENDAR_SOURCE})"
            )
        elif end_standard < pricer.as_of <= end_extended and end_extended.toordinal() <= horizon:
            pricer.warnings.append(
                f"{name}: Kubernetes {version} leaves EKS extended support on {calendar[2]}: EKS then upgrades "
                f"the cluster automatically ({rates.EKS_CALENDAR_SOURCE})"
            )
    pricer.add(
        r,
        pricing="fixed",
        quantity=1,
        max_quantity=1,
        unit_price=rate.usd,
        unit="hour",
        source=f"{rate.source}; tier: {rates.EKS_CALENDAR_SOURCE}" if calendar else rate.source,
        as_of=rate.as_of,
    )


@prices(T.EKS_ADDON)
def eks_addon(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    if _get(inputs, "addonName") == "amazon-cloudwatch-observability":
        pricer.skip(
            r,
            "usage-billed: Container Insights (amazon-cloudwatch-observability) is billed per observation or "
            "custom metric sent and by the GB of performance logs ingested into CloudWatch Logs",
            "observations / metrics / GB ingested",
        )


@prices(T.NAT_GATEWAY)
def nat_gateway(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    # Private NAT gateways bill the same hourly and per-GB rates as public ones.
    rate = pricer.service_rate(r, rates.NAT_GATEWAY_HOUR, "a NAT gateway")
    if rate is not None:
        pricer.add(r, pricing="fixed", quantity=1, max_quantity=1, unit_price=rate.usd, unit="hour", rate=rate)
    per_gb = pricer.usage_rate(rates.NAT_GATEWAY_PER_GB)
    pricer.skip(r, f"usage-billed: NAT data processing ({per_gb}) depends on traffic", "GB")


@prices(T.EIP)
def eip(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    pricer.add(
        r,
        pricing="fixed",
        quantity=1,
        max_quantity=1,
        unit_price=rates.PUBLIC_IPV4_HOUR.usd,
        unit="hour",
        rate=rates.PUBLIC_IPV4_HOUR,
    )


@prices(T.VPC_ENDPOINT)
def vpc_endpoint(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    kind = _get(inputs, "vpcEndpointType", "Gateway")
    if kind == "Gateway":
        return
    subnets = _get(inputs, "subnetIds")
    if kind != "Interface" or not isinstance(subnets, list):
        pricer.skip(r, f"{kind} endpoint: type or subnets unknown at preview")
        return
    rate = pricer.service_rate(r, rates.INTERFACE_ENDPOINT_AZ_HOUR, "an interface endpoint")
    if rate is None:
        return
    n = len(subnets)
    pricer.add(r, pricing="fixed", quantity=n, max_quantity=n, unit_price=rate.usd, unit="hour", rate=rate)
    pricer.skip(r, "usage-billed: interface endpoint data processing is billed per GB", "GB")


@prices(T.KMS_KEY, T.KMS_EXTERNAL_KEY, T.KMS_REPLICA_KEY, T.KMS_REPLICA_EXTERNAL_KEY)
def kms_key(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    rate = rates.KMS_KEY_MONTH
    pricer.add(r, pricing="fixed", quantity=1, max_quantity=1, unit_price=rate.usd, unit="month", rate=rate)
    if _get(inputs, "enableKeyRotation") is True:
        # A new key has one version; each of the next two rotations adds a billed version.
        extra = rates.KMS_ROTATION_MAX_EXTRA_VERSIONS
        pricer.add(
            r,
            pricing="fixed",
            quantity=0,
            max_quantity=extra,
            unit_price=rate.usd,
            unit="month",
            rate=rate,
            name=f"{r.get('name')} rotated key versions",
        )
    pricer.skip(r, "usage-billed: KMS requests beyond the free tier are billed per 10,000 requests", "requests")


@prices(T.EBS_VOLUME)
def ebs_volume(pricer: Pricer, r: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    size = _count(_get(inputs, "size"))
    vol = _get(inputs, "type", rates.EBS_DEFAULT_TYPE)
    if size is None or vol not in rates.EBS_VOLUME_TYPES:
        pricer.skip(r, "size/type are unknown at preview (or the volume comes from a snapshot)")
        return
    pricer.volume(r, str(vol), size, _get(inputs, "iops"), _get(inputs, "throughput"), 1, 1, None)
