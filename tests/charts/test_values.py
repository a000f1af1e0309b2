"""What a chart reads: the values tree from defaults and templates, on the vendored charts and a synthetic one."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest
import yaml

from gpucloud.charts.lock import load_lock, pin
from gpucloud.charts.values import (
    PLACEHOLDER,
    PLACEHOLDER_ARN,
    PLACEHOLDER_URL,
    chart_defaults,
    chart_model,
    fill_unknowns,
    placeholder_for,
    unread_keys,
    unread_keys_for_pin,
)
from gpucloud.plan.model import UNKNOWN, is_unknown


def model(chart: str):  # type: ignore[no-untyped-def]
    return chart_model(str(pin(chart).chart_dir))


def unread(chart: str, values: dict) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(u.dotted, u.hint) for u in unread_keys(model(chart), values)]


def test_values_for_an_aliased_sub_chart_under_its_name_are_unread() -> None:
    # nvidia-device-plugin 0.18.2 declares node-feature-discovery with `alias: nfd`.
    assert unread("nvidia-device-plugin", {"node-feature-discovery": {"worker": {"tolerations": []}}}) == [
        (
            "node-feature-discovery",
            "sub-chart node-feature-discovery is a dependency with alias `nfd`: its values go under `nfd:`",
        )
    ]
    nfd = {"enabled": True, "worker": {"tolerations": [], "config": {"sources": {}}}, "master": {"config": {}}}
    assert unread("nvidia-device-plugin", {"nfd": nfd, "gfd": {"enabled": True}}) == []


def test_sub_chart_keys_are_checked_under_their_mount() -> None:
    assert unread("nvidia-device-plugin", {"nfd": {"worker": {"tolerationz": []}}}) == [
        ("nfd.worker.tolerationz", "did you mean `tolerations`? (keys the chart reads at nfd.worker)")
    ]
    # kube-prometheus-stack mounts grafana 9.2.9 under its name (no alias).
    assert unread("kube-prometheus-stack", {"grafana": {"adminPassword": "x", "persistence": {"enabled": True}}}) == []
    assert [p for p, _ in unread("kube-prometheus-stack", {"grafana": {"adminPasswrd": "x"}})] == [
        "grafana.adminPasswrd"
    ]


def test_typo_at_top_level_names_the_close_key() -> None:
    assert unread("aws-efa-k8s-device-plugin", {"tolerationz": []}) == [
        ("tolerationz", "did you mean `tolerations`? (keys the chart reads at the top level)")
    ]
    # The EFA plugin v0.5.13 has no affinity anywhere: neither in values.yaml nor in a template.
    assert unread("aws-efa-k8s-device-plugin", {"affinity": {"nodeAffinity": {}}}) == [
        (
            "affinity",
            "the chart reads no `affinity` at the top level; it reads: additionalPodAnnotations, "
            "additionalPodLabels, fullnameOverride, image, imagePullSecrets, nameOverride, nodeSelector, resources, "
            "securityContext, serviceAccount, supportedInstanceLabels, tolerations",
        )
    ]


def test_free_form_maps_accept_any_key() -> None:
    # nodeSelector defaults to {} (empty map); affinity has a non-empty default that the template hands to toYaml.
    values = {
        "nodeSelector": {"vpc.amazonaws.com/efa.present": "true"},
        "affinity": {"podAntiAffinity": {"anything": 1}},
        "global": {"imageRegistry": "example.com"},
    }
    assert unread("nvidia-device-plugin", values) == []
    # cluster-autoscaler passes extraArgs through with range: any flag is read.
    assert unread("cluster-autoscaler", {"extraArgs": {"expander": "priority", "new-flag-of-1-35": True}}) == []


def test_shipped_chart_ci_values_are_all_read() -> None:
    # Every upstream ci/*-values file is a values set its maintainers render: none of its keys may be reported.
    reported = []
    for p in load_lock().charts.values():
        dirs = [p.chart_dir, *(d for d in sorted((p.chart_dir / "charts").glob("*")) if (d / "Chart.yaml").exists())]
        for d in dirs:
            m = chart_model(str(d))
            for f in sorted(glob.glob(str(d / "ci" / "*.yaml"))):
                values = yaml.safe_load(Path(f).read_text())
                if isinstance(values, dict):
                    reported += [(f, u.dotted) for u in unread_keys(m, values)]
    assert reported == []


SYNTHETIC_TEMPLATE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  {{- with .Values.meta }}
  labels:
    team: {{ .team }}
  {{- end }}
spec:
  template:
    spec:
      {{- $cfg := .Values.server }}
      containers:
        - name: app
          image: {{ index .Values "image-ref" "repository" }}
          ports:
            - containerPort: {{ $cfg.port }}
          env:
            {{- range $k, $v := .Values.env }}
            - name: {{ $k }}
              value: {{ $v | quote }}
            {{- end }}
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
  {{- range $section, $settings := index .Values "app.ini" }}
  # {{ $section }}
  {{- end }}
  {{- with index .Values "svc-cfg" }}
  servicePort: {{ .port }}
  {{- end }}
"""


@pytest.fixture(scope="module")
def synthetic_chart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chart = tmp_path_factory.mktemp("chart")
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: synthetic\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text(
        "server:\n  port: 8080\n  host: x\nresources:\n  limits:\n    cpu: 1\nlegacy:\n  flag: false\n"
    )
    (chart / "templates").mkdir()
    (chart / "templates" / "deployment.yaml").write_text(SYNTHETIC_TEMPLATE)
    return chart


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"meta": {"team": "a"}}, []),  # relative `.team` inside `with .Values.meta`
        ({"meta": {"teem": "a"}}, ["meta.teem"]),
        ({"image-ref": {"repository": "r"}}, []),  # index .Values "image-ref" "repository"
        ({"image-ref": {"tag": "1"}}, ["image-ref.tag"]),
        ({"server": {"port": 1, "host": "h"}}, []),  # $cfg := .Values.server; $cfg.port; host is a default
        ({"server": {"prot": 1}}, ["server.prot"]),
        ({"env": {"ANY_NAME": "1"}}, []),  # range over a map: its keys are free
        ({"resources": {"requests": {"cpu": 1}}}, []),  # toYaml of a non-empty default: passed through whole
        ({"legacy": {"flag": True}}, []),  # in values.yaml, read or not: the chart's own defaults count
        ({"replicas": 2}, ["replicas"]),
        ({"app.ini": {"any-section": {"k": "v"}}}, []),  # range over index .Values "app.ini": free
        ({"svc-cfg": {"port": 80}}, []),  # `.port` inside `with index .Values "svc-cfg"`
        ({"svc-cfg": {"prot": 80}}, ["svc-cfg.prot"]),
    ],
)
def test_template_scan_on_a_synthetic_chart(synthetic_chart: Path, values: dict, expected: list[str]) -> None:  # type: ignore[type-arg]
    m = chart_model(str(synthetic_chart))
    assert [u.dotted for u in unread_keys(m, values)] == expected
    assert m.workload_kinds == ["Deployment"]


@pytest.mark.parametrize(
    ("chart", "values"),
    [
        ("nvidia-device-plugin", {"nfd": {"enabled": True}, "gfd": {"enabled": True}, "priorityClassName": "x"}),
        ("nvidia-device-plugin", {"node-feature-discovery": {"worker": {}}}),
        ("kube-prometheus-stack", {"prometheus": {"prometheusSpec": {"retention": "3d"}}, "grafana": {"sidecar": {}}}),
        ("kube-prometheus-stack", {"prometheus": {"prometheusSpec": {"retentoin": "3d"}}}),
        ("aws-efa-k8s-device-plugin", {"affinity": {}}),
        ("cluster-autoscaler", {"autoDiscovery": {"clusterName": "c"}, "extraArgs": {"v": 4}}),
    ],
)
def test_defaults_shortcut_agrees_with_the_full_tree(
    chart: str,
    values: dict,  # type: ignore[type-arg]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The check skips scanning templates when the defaults alone accept every key: same answer either way.
    import gpucloud.charts.values as values_module

    monkeypatch.setattr(values_module, "cached_model", lambda _pin: None)  # no cache: the shortcut decides
    p = pin(chart)
    assert [u.dotted for u in unread_keys_for_pin(p, values)] == [u.dotted for u in unread_keys(model(chart), values)]


def test_placeholders_take_the_type_of_the_chart_default() -> None:
    defaults = chart_defaults(pin("aws-node-termination-handler").chart_dir)
    values = {
        "queueURL": UNKNOWN,  # default "" -> URL-shaped because the key is a URL
        "enableSqsTerminationDraining": UNKNOWN,  # default false -> a bool
        "webhookTemplate": UNKNOWN,  # default string -> DNS-label-ish string
        "podMonitor": {"interval": UNKNOWN},
        "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": UNKNOWN}},  # no default; key says arn
        "tolerations": [{"key": UNKNOWN}],
        "replicas": UNKNOWN,  # default 1 -> an int
    }
    filled, paths = fill_unknowns(values, defaults, is_unknown)
    assert filled == {
        "queueURL": PLACEHOLDER_URL,
        "enableSqsTerminationDraining": True,
        "webhookTemplate": PLACEHOLDER,
        "podMonitor": {"interval": PLACEHOLDER},
        "serviceAccount": {"annotations": {"eks.amazonaws.com/role-arn": PLACEHOLDER_ARN}},
        "tolerations": [{"key": PLACEHOLDER}],
        "replicas": 1,
    }
    assert paths == [
        "queueURL",
        "enableSqsTerminationDraining",
        "webhookTemplate",
        "podMonitor.interval",
        "serviceAccount.annotations.eks.amazonaws.com/role-arn",
        "tolerations[0].key",
        "replicas",
    ]


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("roleArn", PLACEHOLDER_ARN),
        ("eks.amazonaws.com/role-arn", PLACEHOLDER_ARN),
        ("ARN", PLACEHOLDER_ARN),
        ("learnRate", PLACEHOLDER),  # "arn" inside a word is no ARN
        ("clusterEndpoint", PLACEHOLDER_URL),
        ("urlPath", PLACEHOLDER),
        ("clusterName", PLACEHOLDER),
    ],
)
def test_string_placeholder_follows_the_key_name(key: str, expected: str) -> None:
    assert placeholder_for(key, "") == expected
