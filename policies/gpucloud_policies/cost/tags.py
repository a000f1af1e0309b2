"""GC-COST-035 cost-tags: cost-allocation tags on every taggable resource that costs money.

Launch templates need the tags in ``tagSpecifications`` for ``instance`` and ``volume`` too (the template's
own ``tags`` do not reach the instances); ASG tags must propagate at launch. Use literal tag values: one
computed value makes the whole map unknown at preview (pulumi/pulumi#7854), and the check is then reported as
not evaluated. At level ``remediate`` missing tags are filled from ``tagDefaults``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpucloud.fleet import types as T

from ..base import (
    Config,
    EnforcementLevel,
    Guardrail,
    Report,
    Severity,
    get,
    maps,
    plain,
    provider_default_tags,
    tags_of,
    text,
    truthy,
)
from ..capacity import ASG, INSTANCE, LAUNCH_TEMPLATE, NODE_CLASS, NODE_GROUP, SPOT_REQUEST

BUCKETS = frozenset({"aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"})
TAGGED = frozenset(
    {
        NODE_GROUP,
        LAUNCH_TEMPLATE,
        ASG,
        INSTANCE,
        SPOT_REQUEST,
        NODE_CLASS,
        T.EKS_CLUSTER,
        T.LUSTRE,
        T.EBS_VOLUME,
        "aws:efs/fileSystem:FileSystem",
        T.CAPACITY_RESERVATION,
        T.NAT_GATEWAY,
        *BUCKETS,
    }
)
SPEC_KINDS = ("instance", "volume")


def _valued(tags: Mapping[str, Any]) -> set[str]:
    # A key with an empty (or blank) value allocates the cost to nothing: it counts as missing.
    return {k for k, v in tags.items() if isinstance(v, str) and v.strip()}


def _spec_tags(props: Any) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for ts in maps(get(props, "tagSpecifications")):
        kind = text(get(ts, "resourceType"))
        if kind:
            found.setdefault(kind, {}).update(tags_of(ts))
    return found


def _tag_sets(resource_type: str, props: Any, defaults: Mapping[str, str]) -> list[tuple[str, set[str]]]:
    """(where, tag keys with a value) for every place this resource type must carry the tags. The provider's
    default tags reach a resource's own ``tags`` only: not ASG tags, launch-template tag specifications or
    Karpenter's spec.tags (the AWS provider's default_tags documentation)."""
    if resource_type == NODE_CLASS:
        return [("spec.tags", _valued(tags_of(get(props, "spec"))))]
    if resource_type == ASG:
        propagated = {
            text(get(t, "key"))
            for t in maps(get(props, "tags"))
            if truthy(get(t, "propagateAtLaunch")) and text(get(t, "value")).strip()
        }
        return [("tags (propagateAtLaunch)", propagated)]
    sets = [("tags", _valued({**defaults, **tags_of(props)}))]
    if resource_type == LAUNCH_TEMPLATE:
        spec_tags = _spec_tags(props)
        sets += [(f"tagSpecifications[{kind}]", _valued(spec_tags.get(kind, {}))) for kind in SPEC_KINDS]
    return sets


def _required(cfg: Config) -> list[str]:
    return list(dict.fromkeys(list(cfg["requiredTags"]) + list(cfg["extraRequiredTags"])))


def validate(args: Any, report: Report, cfg: Config) -> None:
    required = _required(cfg)
    defaults = provider_default_tags(getattr(args, "provider", None))
    for where, present in _tag_sets(args.resource_type, args.props, defaults):
        missing = [k for k in required if k not in present]
        if missing:
            report(
                f"{where} lacks cost-allocation tags {missing} (or leaves them empty). Fix: add them with "
                "non-empty literal values (ComponentConfig.tags / spec.tags / the provider's default_tags), or run "
                "the pack at level remediate with tagDefaults."
            )


def remediate(args: Any, cfg: Config) -> dict[str, Any] | None:
    defaults: Mapping[str, str] = cfg["tagDefaults"]
    fill = {k: str(defaults[k]) for k in _required(cfg) if k in defaults}
    if not fill:
        return None
    props = plain(args.props)
    rt = args.resource_type
    changed = False

    def merge(tags: Any) -> dict[str, Any]:
        nonlocal changed
        out = dict(tags) if isinstance(tags, dict) else {}
        for k, v in fill.items():
            if k not in out:
                out[k] = v
                changed = True
        return out

    if rt == NODE_CLASS:
        spec = props.get("spec") if isinstance(props.get("spec"), dict) else {}
        spec["tags"] = merge(spec.get("tags"))
        props["spec"] = spec
    elif rt == ASG:
        tags = [t for t in props.get("tags") or [] if isinstance(t, dict)]
        have = {t.get("key"): t for t in tags}
        for k, v in fill.items():
            if k not in have:
                tags.append({"key": k, "value": v, "propagateAtLaunch": True})
                changed = True
            elif not truthy(have[k].get("propagateAtLaunch")):
                have[k]["propagateAtLaunch"] = True
                changed = True
        props["tags"] = tags
    else:
        props["tags"] = merge(props.get("tags"))
        if rt == LAUNCH_TEMPLATE:
            specs = [s for s in props.get("tagSpecifications") or [] if isinstance(s, dict)]
            for kind in SPEC_KINDS:
                entry = next((s for s in specs if s.get("resourceType") == kind), None)
                if entry is None:
                    entry = {"resourceType": kind, "tags": {}}
                    specs.append(entry)
                entry["tags"] = merge(entry.get("tags"))
            props["tagSpecifications"] = specs
    return props if changed else None


GUARDRAIL = Guardrail(
    id="GC-COST-035",
    name="cost-tags",
    description="Cost-allocation tags (CostCenter, Team, Project, Env) on node groups, launch templates (incl. "
    "instance and volume tag specifications), ASGs, buckets, file systems and other billable resources.",
    category="cost",
    severity=Severity.MEDIUM,
    enforcement=EnforcementLevel.MANDATORY,
    remediation_steps="Pass the organisation tags to every component (ComponentConfig.tags); on launch templates "
    "add tagSpecifications for 'instance' and 'volume'; on ASGs set propagateAtLaunch. Activate the tags as "
    "cost-allocation tags in the billing console.",
    references=("AWS cost allocation tags", "CKV_AWS_153 (ASG tag propagation)"),
    kind="resource",
    resource_types=TAGGED,
    validate=validate,
    remediate=remediate,
    config={
        "requiredTags": {
            "type": "array",
            "items": {"type": "string"},
            "default": ["CostCenter", "Team", "Project", "Env"],
            "description": "Tag keys every billable resource must carry.",
        },
        "extraRequiredTags": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "description": "More required keys for this environment (ExpiresOn in non-prod).",
        },
        "tagDefaults": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "default": {},
            "description": "Values the remediation fills in for missing required tags (keys without one stay "
            "violations).",
        },
    },
)
