"""awsx `ecr.Repository` and `ecr.Image` (pulumi/pulumi-awsx v3.8.0): awsx/ecr/repository.ts and
awsx/ecr/image.ts. An Image is built by docker at `up`; the model registers only the child the component registers
(a docker-build Image), not what the build produces."""

from __future__ import annotations

from gpucloud.plan.model import UNKNOWN
from gpucloud.plan.remote import Context, Unmodelled, only_inputs_of


def ecr_repository(ctx: Context) -> None:
    """ecr/repository.ts: the repository (lower-cased name) and, unless skipped, a lifecycle policy."""
    name, a = ctx.name.lower(), ctx.inputs
    args = {k: v for k, v in a.items() if k != "lifecyclePolicy"}
    ctx.add("aws:ecr/repository:Repository", name, only_inputs_of("aws:ecr/repository:Repository", args))
    if not (a.get("lifecyclePolicy") or {}).get("skip"):
        policy = {"repository": UNKNOWN, "policy": UNKNOWN}
        if a.get("region") is not None:
            policy["region"] = a["region"]
        ctx.add("aws:ecr/lifecyclePolicy:LifecyclePolicy", name, policy)


def ecr_image(ctx: Context) -> None:
    """ecr/image.ts computeImageFromAsset: one docker-build Image, named by imageName or imageTag (without either the
    name is a hash of the build inputs' JSON, which the model does not reproduce)."""
    a = ctx.inputs
    image_name = a.get("imageName") or a.get("imageTag")
    if not isinstance(image_name, str) or image_name == UNKNOWN:
        raise Unmodelled(
            "an awsx:ecr:Image without a known imageName or imageTag is named by a hash of its build inputs"
        )
    ref = (
        f"{a.get('repositoryUrl', UNKNOWN)}:{image_name}" if a.get("repositoryUrl") not in (None, UNKNOWN) else UNKNOWN
    )
    ctx.add(
        "docker-build:index:Image",
        image_name,
        {
            "tags": [ref],
            "buildArgs": a.get("args"),
            "cacheFrom": [{"registry": {"ref": c}} for c in a.get("cacheFrom") or []] or [{"registry": {"ref": ref}}],
            "cacheTo": [{"inline": {}}],
            "context": {"location": a.get("context") or "."},
            "dockerfile": {"location": a.get("dockerfile")},
            "platforms": [a["platform"]] if a.get("platform") else [],
            "target": a.get("target"),
            "push": True,
            "registries": [UNKNOWN],
        },
    )
