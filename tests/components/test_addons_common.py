"""Shared add-on helpers (components/addons/common.py): the Grafana dashboard ConfigMap both dashboards use."""

import json

import pulumi

from gpucloud.components.addons.common import DASHBOARD_LABEL, DASHBOARD_LABEL_VALUE, grafana_dashboard_configmap
from gpucloud.plan import run_callable


def test_grafana_dashboard_configmap_is_labelled_for_the_sidecar() -> None:
    def program() -> None:
        grafana_dashboard_configmap(
            "x-dash", "my-dash", "monitoring", "my.json", {"uid": "u", "panels": []}, pulumi.ResourceOptions()
        )

    [cm] = run_callable(program).of_type("kubernetes:core/v1:ConfigMap")
    assert cm.name == "x-dash"
    assert cm.inputs["metadata"] == {"name": "my-dash", "namespace": "monitoring", "labels": {"grafana_dashboard": "1"}}
    assert cm.inputs["data"] == {"my.json": '{\n "uid": "u",\n "panels": []\n}'}
    assert json.loads(cm.inputs["data"]["my.json"]) == {"uid": "u", "panels": []}
    assert (DASHBOARD_LABEL, DASHBOARD_LABEL_VALUE) == ("grafana_dashboard", "1")
