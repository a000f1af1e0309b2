"""The "kueue.config" check: the Kueue manager configuration the plan renders decodes under Kueue's strict decoder,
judged by the Configuration API types read from Kueue v0.19.2's own Go source (vendored lock artifact)."""

from __future__ import annotations

from typing import Any

import pulumi_kubernetes as k8s
import pytest
import yaml

import gpucloud.conformance.builtin  # noqa: F401  (registers the checks in run order before the import below)
from gpucloud.charts.lock import artifact, pin
from gpucloud.conformance import run_conformance
from gpucloud.conformance.kueue_config import parse_api, pinned_api, validate
from gpucloud.plan import run_callable

KUEUE_OCI = "oci://registry.k8s.io/kueue/charts/kueue"


def chart_config() -> dict[str, Any]:
    """The pinned chart's own default manager configuration."""
    values = yaml.safe_load((pin("kueue").chart_dir / "values.yaml").read_text())
    config: dict[str, Any] = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    return config


def test_api_is_read_from_the_pinned_kueue_source() -> None:
    api = pinned_api()
    # The artifact is the API of the Kueue the pinned chart installs.
    assert artifact("kueue-config-api").version == pin("kueue").app_version == "v0.19.2"
    assert api.structs["WaitForPodsReady"] == {
        "timeout": "metav1.Duration",
        "blockAdmission": "*bool",
        "requeuingStrategy": "*RequeuingStrategy",
        "recoveryTimeout": "*metav1.Duration",
    }
    # ControllerManager and TypeMeta are inlined into Configuration.
    assert {"apiVersion", "kind", "webhook", "leaderElection", "waitForPodsReady", "fairSharing"} <= set(
        api.structs["Configuration"]
    )
    assert len(api.structs["Configuration"]) == 23
    assert api.enums["PreemptionStrategy"] == {"LessThanOrEqualToFinalShare", "LessThanInitialShare"}
    assert api.enums["RequeuingTimestamp"] == {"Creation", "Eviction"}
    assert api.enums["ResourceTransformationStrategy"] == {"Retain", "Replace"}
    # deprecated_types.go: a type alias resolves to the struct it names.
    assert api.aliases["ClusterProfileCredentialsProvider"] == "ClusterProfileAccessProvider"


def test_the_charts_default_and_gpuclouds_configuration_decode_cleanly() -> None:
    from gpucloud.components.addons.kueue import kueue_values
    from gpucloud.spec import AddonsSpec

    assert list(validate(pinned_api(), chart_config())) == []
    ours = kueue_values(AddonsSpec.model_validate({"kueue": {"enabled": True}}))
    assert list(validate(pinned_api(), yaml.safe_load(ours["managerConfig"]["controllerManagerConfigYaml"]))) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda c: c.update(waitForPodReady={"timeout": "5m"}),
            [("waitForPodReady", "is not a field of Configuration")],
        ),
        (
            lambda c: c.update(waitForPodsReady={"timeout": 300}),
            [("waitForPodsReady.timeout", "is 300")],
        ),
        (
            lambda c: c.update(waitForPodsReady={"timeout": "5m", "requeuingStrategy": {"timestamp": "Admission"}}),
            [("waitForPodsReady.requeuingStrategy.timestamp", "is 'Admission'")],
        ),
        (
            lambda c: c.update(fairSharing={"preemptionStrategies": "LessThanInitialShare"}),
            [("fairSharing.preemptionStrategies", "is a string")],
        ),
        (lambda c: c["clientConnection"].update(qps="300"), [("clientConnection.qps", "is a string")]),
        (lambda c: c["clientConnection"].update(burst=2.5), [("clientConnection.burst", "is a number")]),
        (
            lambda c: c.update(featureGates={"TopologyAwareScheduling": "yes"}),
            [("featureGates.TopologyAwareScheduling", "is a string")],
        ),
        (lambda c: c["integrations"].update(frameworks="batch/job"), [("integrations.frameworks", "is a string")]),
        (lambda c: c.update(manageJobsWithoutQueueName=1), [("manageJobsWithoutQueueName", "is an integer")]),
        # Types from other packages are accepted unseen; nulls leave Go's zero value.
        (lambda c: c.update(managedJobsNamespaceSelector={"matchLabels": {"a": "b"}}, namespace=None), []),
    ],
)
def test_departures_from_the_api(change: Any, expected: list[tuple[str, str]]) -> None:
    config = chart_config()
    change(config)
    assert [(f, p) for f, p, _ in validate(pinned_api(), config)] == expected


def test_parser_merges_inline_structs_and_maps_kinds() -> None:
    api = parse_api(
        [
            'type Outer struct {\n\tInner `json:",inline"`\n\t// a comment `json:"no"`\n'
            '\tCount *int32 `json:"count,omitempty"`\n\tSkip string `json:"-"`\n}\n'
            'type Inner struct {\n\tName Mode `json:"name"`\n}\n'
            'type Mode string\n\nconst (\n\tA Mode = "a"\n\tB Mode = "b"\n)\n'
        ],
        "v0",
    )
    assert api.structs["Outer"] == {"name": "Mode", "count": "*int32"}
    assert list(validate(api, {"name": "c", "count": True, "Skip": "x"}, "Outer")) == [
        ("name", "is 'c'", "one of a, b (Mode)"),
        ("count", "is a boolean", "an integer (int32)"),
        ("Skip", "is not a field of Outer", "one of: count, name"),
    ]


def test_check_reports_a_misspelt_key_in_the_rendered_config_map() -> None:
    """End to end: a raw kueue Release with a typo in its values, rendered by the real Helm, is reported on the
    Release with the field path inside the ConfigMap and the source."""
    config = chart_config()
    config["waitForPodReady"] = {"timeout": "10m"}

    def program() -> None:
        k8s.helm.v3.Release(
            "kueue",
            name="kueue",
            chart=KUEUE_OCI,
            version="0.19.2",
            namespace="kueue-system",
            values={"managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config)}},
        )

    plan = run_callable(program)
    result = run_conformance(plan, only=["helm", "kueue.config"])
    found = [f for f in result.findings if f.check == "kueue.config"]
    assert [(f.severity, f.urn.rsplit("::", 1)[-1], f.field) for f in found] == [
        ("error", "kueue", "data.controller_manager_config.yaml.waitForPodReady")
    ]
    assert found[0].object == "v1/ConfigMap kueue-system/kueue-manager-config"
    assert found[0].source.startswith("Kueue v0.19.2 Configuration API")
    assert "waitForPodsReady" in found[0].expected
