"""The component conventions docs/architecture.md states: frozen type tokens, one Helm-release helper and one
Pod Identity helper, one config model before the component in each component module, one component per module."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMPONENTS = ROOT / "components"

# Released type tokens: a URN is built from them, so none may change or disappear.
TYPE_TOKENS = {
    "gpucloud:addons:GpuAddons",
    "gpucloud:addons:Kueue",
    "gpucloud:addons:LoadBalancerController",
    "gpucloud:addons:NodeHealth",
    "gpucloud:budget:GpuBudget",
    "gpucloud:cluster:GpuCluster",
    "gpucloud:cost:GpuCostReporting",
    "gpucloud:interruption:GpuInterruptionQueue",
    "gpucloud:interruption:GpuNodeTerminationHandler",
    "gpucloud:interruption:ReservationEventRelay",
    "gpucloud:karpenter:GpuKarpenter",
    "gpucloud:network:GpuNetwork",
    "gpucloud:nodepool:GpuNodePool",
    "gpucloud:storage:DataBuckets",
    "gpucloud:storage:FsxCsi",
    "gpucloud:storage:GpuStorage",
    "gpucloud:storage:LustreStorage",
    "gpucloud:team:GpuTeam",
    "gpucloud:team:TeamLustreVolume",
    "gpucloud:team:TeamQueue",
    "gpucloud:workloads:DcgmDiag",
    "gpucloud:workloads:InferenceDeployment",
    "gpucloud:workloads:NcclTest",
    "gpucloud:workloads:TrainingJob",
    "gpucloud:workloads:VllmServer",
}


def _modules() -> list[Path]:
    return sorted(p for p in COMPONENTS.rglob("*.py") if "__pycache__" not in p.parts)


def _tokens(tree: ast.Module) -> dict[str, str]:
    """Class name -> the type token its __init__ passes to ComponentResource.__init__."""
    out = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for node in ast.walk(cls):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "__init__"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).startswith("gpucloud:")
            ):
                out[cls.name] = str(node.args[0].value)
    return out


def test_type_tokens_are_the_released_ones() -> None:
    found = {}
    for path in _modules():
        for cls, token in _tokens(ast.parse(path.read_text())).items():
            found[token] = f"{path.relative_to(COMPONENTS)}:{cls}"
    assert set(found) == TYPE_TOKENS
    assert all(token.rsplit(":", 1)[1] == where.rsplit(":", 1)[1] for token, where in found.items())


def test_one_component_per_module_but_the_named_ones() -> None:
    shared = {}
    for path in _modules():
        classes = list(_tokens(ast.parse(path.read_text())))
        if len(classes) > 1:
            shared[path.relative_to(COMPONENTS).as_posix()] = classes
    assert shared == {}


def test_the_config_model_comes_first_in_each_component_module() -> None:
    misplaced = {}
    for path in _modules():
        tree = ast.parse(path.read_text())
        tokens = _tokens(tree)
        if not tokens:
            continue
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
        configs = [c.name for c in classes if c.name.endswith("Config")]
        first_component = min(i for i, c in enumerate(classes) if c.name in tokens)
        # Each component's model is named after it and defined in its module, before the first component.
        for name in tokens:
            model = f"{name}Config"
            if model in configs and [c.name for c in classes].index(model) > first_component:
                misplaced[path.name] = model
    assert misplaced == {}


def _calls(name: str) -> dict[str, int]:
    out = {}
    for path in _modules():
        tree = ast.parse(path.read_text())
        n = sum(
            1
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == name.rsplit(".", 1)[1]
            and ast.unparse(node.func.value).endswith(name.rsplit(".", 1)[0])
        )
        if n:
            out[path.relative_to(COMPONENTS).as_posix()] = n
    return out


def test_every_helm_release_goes_through_the_helper() -> None:
    assert _calls("helm.v3.Release") == {"releases.py": 1}
    assert _calls("helm.v4.Chart") == {}


def test_every_pod_identity_association_and_role_goes_through_the_helper() -> None:
    assert _calls("eks.PodIdentityAssociation") == {"pod_identity.py": 1}
    trusts = {}
    for path in _modules():
        text = path.read_text()
        if "assume_role_policy=pod_identity_trust()" in text or "assume_role_policy=POD_IDENTITY_TRUST" in text:
            trusts[path.relative_to(COMPONENTS).as_posix()] = True
    assert trusts == {"pod_identity.py": True}


def test_the_helm_helper_sets_atomic_cleanup_and_a_timeout(monkeypatch) -> None:
    import pulumi_kubernetes as k8s

    from gpucloud.components import releases

    seen = {}

    def record(resource_name, **kwargs):
        seen.update(kwargs, resource_name=resource_name)
        return "release"

    monkeypatch.setattr(k8s.helm.v3, "Release", record)
    out = releases.helm_release(
        "x-karpenter",
        "karpenter",
        releases.charts_lock.pinned_version("karpenter"),
        namespace="kube-system",
        values={},
        opts=None,  # type: ignore[arg-type]
    )
    assert out == "release"
    assert (seen["atomic"], seen["cleanup_on_fail"], seen["timeout"]) == (True, True, 900)
    assert "name" not in seen and "create_namespace" not in seen
    assert seen["chart"] == releases.charts_lock.pin("karpenter").release_chart


def test_a_renamed_toggle_still_validates_under_its_old_name() -> None:
    import warnings

    import pytest
    from pydantic import ValidationError

    from gpucloud.components.interruption import GpuInterruptionQueueConfig

    base = {
        "region": "us-east-1",
        "tags": {"CostCenter": "c", "Team": "t", "Project": "p", "Env": "dev"},
        "consumers": ["node-termination-handler"],
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = GpuInterruptionQueueConfig(**base, relay_reservation_events=True)
    assert old.enable_reservation_relay is True
    assert [str(w.message) for w in caught] == [
        "GpuInterruptionQueueConfig: relay_reservation_events is deprecated, use enable_reservation_relay"
    ]
    assert GpuInterruptionQueueConfig(**base, enable_reservation_relay=True).enable_reservation_relay is True
    with pytest.raises(ValidationError, match="give enable_reservation_relay only"):
        GpuInterruptionQueueConfig(**base, relay_reservation_events=True, enable_reservation_relay=False)


# Boolean inputs that state a data-safety policy or a fact about the deployment, not a feature switch: the
# house style keeps their names (docs/architecture.md, "Toggles").
POLICY_BOOLEANS = {
    "protect",
    "protect_data",
    "allow_data_deletion",
    "allow_internet_facing",
    "internet_facing",
    "retain_key",
}


def _component_configs() -> list[type]:
    import importlib

    from gpucloud.components.base import ComponentConfig

    for path in _modules():
        rel = path.relative_to(COMPONENTS).with_suffix("").as_posix().replace("/", ".")
        importlib.import_module(f"gpucloud.components.{rel}".removesuffix(".__init__"))
    seen: list[type] = []
    todo = list(ComponentConfig.__subclasses__())
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted(set(seen), key=lambda c: c.__qualname__)


def test_every_component_toggle_follows_the_naming_rule() -> None:
    configs = _component_configs()
    assert len(configs) >= 20  # the walk found the components' models, not an empty list
    wrong = []
    for cls in configs:
        for name, field in cls.model_fields.items():
            if field.annotation not in (bool, bool | None) or name in POLICY_BOOLEANS:
                continue
            if not name.startswith(("create_", "enable_", "use_")):
                wrong.append(f"{cls.__name__}.{name}")
    assert wrong == []


def test_the_renamed_workload_and_lustre_toggles_keep_their_old_names() -> None:
    import warnings

    from gpucloud.components.storage.fsx import LustreConfig
    from gpucloud.components.workloads.common import GpuWorkloadConfig

    assert GpuWorkloadConfig.RENAMED == {"karpenter": "use_karpenter"}
    assert LustreConfig.RENAMED == {"encrypt_logs": "enable_log_encryption"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = GpuWorkloadConfig._renamed_inputs({"karpenter": True})
    assert out == {"use_karpenter": True}
    assert [str(w.message) for w in caught] == ["GpuWorkloadConfig: karpenter is deprecated, use use_karpenter"]
