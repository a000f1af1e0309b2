"""What Kubernetes objects make AWS create, priced: load balancers by Service class and annotation (AWS Load
Balancer Controller docs), ALB Ingresses, PVCs by StorageClass, StatefulSet and Prometheus claims, and Karpenter
nodes' volumes from the EC2NodeClass. Expected rates are the shipped figures, read from service_rates.json."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpucloud.cost import PricingOptions, price_resources
from gpucloud.cost.pricer import derived_resource
from gpucloud.prices import rates

SHIPPED = json.loads(rates.SERVICE_RATES_FILE.read_text())["regions"]
US_EAST_1 = PricingOptions(region="us-east-1")


def k8s(kind: str, name: str, body: dict[str, Any], api: str = "v1", ns: str | None = "apps") -> dict[str, Any]:
    group = api if "/" in api else f"core/{api}"
    meta: dict[str, Any] = {"name": name, **({"namespace": ns} if ns else {})}
    meta.update(body.pop("metadata", {}))
    return {
        "urn": f"urn:pulumi:s::p::kubernetes:{group}:{kind}::{name}",
        "type": f"kubernetes:{group}:{kind}",
        "name": name,
        "custom": True,
        "inputs": {"apiVersion": api, "kind": kind, "metadata": meta, **body},
    }


def service(name: str, annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return k8s(
        "Service", name, {"metadata": {"annotations": annotations or {}}, "spec": {"type": "LoadBalancer", **spec}}
    )


def lbc_release(values: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "urn": "urn:pulumi:s::p::kubernetes:helm.sh/v3:Release::lbc",
        "type": "kubernetes:helm.sh/v3:Release",
        "name": "lbc",
        "custom": True,
        "inputs": {"chart": "aws-load-balancer-controller", "values": values or {}},
    }


def gp3_class(name: str = "fast", **params: str) -> dict[str, Any]:
    return k8s(
        "StorageClass",
        name,
        {"provisioner": "ebs.csi.aws.com", "parameters": {"type": "gp3", **params}},
        api="storage.k8s.io/v1",
        ns=None,
    )


def usd(region: str, item: str) -> float:
    return float(SHIPPED[region][item]["usd"])


# --- load balancers ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "spec", "kind"),
    [
        ({"service.beta.kubernetes.io/aws-load-balancer-type": "external"}, {}, "nlb"),
        ({"service.beta.kubernetes.io/aws-load-balancer-type": "nlb-ip"}, {}, "nlb"),
        ({}, {"loadBalancerClass": "service.k8s.aws/nlb"}, "nlb"),
        ({"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}, {}, "nlb"),
        ({}, {}, "clb"),
    ],
    ids=["lbc-external", "lbc-nlb-ip", "lbc-class", "in-tree-nlb", "in-tree-classic"],
)
def test_service_of_type_load_balancer_is_priced_by_the_balancer_it_creates(
    annotations: dict[str, str], spec: dict[str, Any], kind: str
) -> None:
    cost = price_resources([service("web", annotations, **spec)], US_EAST_1)
    hour = usd("us-east-1", f"elb_{kind}_hour")
    names = [i["name"] for i in cost["items"]]
    if kind == "nlb":
        assert names == [
            "Service apps/web (Network Load Balancer)",
            "Service apps/web NLCU-hour (estimate: 1 each hour)",
        ]
        assert [i["unit_price"] for i in cost["items"]] == [0.0225, 0.006]
        assert cost["items"][1]["rate_source"].endswith(
            "+estimate: one capacity unit each hour; capacity units are billed by traffic"
        )
        assert cost["monthly"] == 20.81  # 16.43 an hour-month + 4.38 for the NLCU, each rounded to the cent
    else:
        assert names == ["Service apps/web (Classic Load Balancer)"]
        assert cost["items"][0]["unit_price"] == hour == 0.025
        # No controller in the plan: the cluster's LBC (if any) would make it an NLB; the text says so.
        assert any("Classic Load Balancer" in w and "NLB" in w for w in cost["warnings"])
    assert [u["unit"] for u in cost["unpriced"]] == (["NLCU-hour"] if kind == "nlb" else ["GB"])


def test_the_plans_load_balancer_controller_webhook_turns_a_plain_service_into_an_nlb() -> None:
    on = price_resources([lbc_release(), service("web")], US_EAST_1)
    assert on["items"][0]["name"] == "Service apps/web (Network Load Balancer)"
    assert on["warnings"] == []
    off = price_resources([lbc_release({"enableServiceMutatorWebhook": False}), service("web")], US_EAST_1)
    assert [i["name"] for i in off["items"]] == ["Service apps/web (Classic Load Balancer)"]


def test_other_services_and_other_classes_bill_nothing_or_say_why() -> None:
    plain = k8s("Service", "internal", {"spec": {"type": "ClusterIP"}})
    other = service("metallb", loadBalancerClass="metallb.io/l2")
    cost = price_resources([plain, other], US_EAST_1)
    assert cost["items"] == []
    assert [u["reason"] for u in cost["unpriced"]] == [
        "Service apps/metallb: loadBalancerClass metallb.io/l2: another controller, not an AWS load balancer "
        "gpucloud models"
    ]


def test_a_region_without_elb_rates_lists_the_balancer_never_at_another_regions_rate() -> None:
    cost = price_resources(
        [service("web", {"service.beta.kubernetes.io/aws-load-balancer-type": "external"})],
        PricingOptions(region="us-west-2"),
    )
    assert cost["items"] == []
    [entry] = cost["unpriced"]
    assert "creates an AWS Network Load Balancer" in entry["reason"]
    assert "no us-west-2 figure" in entry["reason"] and "(they hold us-east-1)" in entry["reason"]


def test_alb_ingresses_get_one_alb_per_group() -> None:
    grouped = {"alb.ingress.kubernetes.io/group.name": "shared"}
    net = "networking.k8s.io/v1"
    alb = {"ingressClassName": "alb"}
    objects = [
        k8s("Ingress", "a", {"metadata": {"annotations": grouped}, "spec": alb}, api=net),
        k8s("Ingress", "b", {"metadata": {"annotations": grouped}, "spec": alb}, api=net),
        k8s("Ingress", "c", {"metadata": {"annotations": {"kubernetes.io/ingress.class": "alb"}}}, api=net),
        k8s("Ingress", "nginx", {"spec": {"ingressClassName": "nginx"}}, api=net),
    ]
    cost = price_resources(objects, US_EAST_1)
    hours = [i["name"] for i in cost["items"] if i["unit_price"] == usd("us-east-1", rates.ALB_HOUR)]
    assert hours == ["Ingress group shared (Application Load Balancer)", "Ingress apps/c (Application Load Balancer)"]
    lcus = [i for i in cost["items"] if "LCU-hour" in i["name"]]
    assert [i["unit_price"] for i in lcus] == [0.008, 0.008]


# --- volumes ----------------------------------------------------------------------------------------------------


def pvc(name: str, size: str, cls: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"resources": {"requests": {"storage": size}}, "accessModes": ["ReadWriteOnce"]}
    if cls is not None:
        spec["storageClassName"] = cls
    return k8s("PersistentVolumeClaim", name, {"spec": spec})


def test_pvcs_are_priced_by_their_storage_class_at_the_regions_ebs_rates() -> None:
    io2 = k8s(
        "StorageClass",
        "db",
        {"provisioner": "ebs.csi.aws.com", "parameters": {"type": "io2", "iopsPerGB": "10"}},
        api="storage.k8s.io/v1",
        ns=None,
    )
    objects = [gp3_class(throughput="250", iops="6000"), io2, pvc("data", "200Gi", "fast"), pvc("db", "50Gi", "db")]
    cost = price_resources(objects, PricingOptions(region="eu-west-1"))
    got = {i["name"]: (i["quantity"], i["unit_price"]) for i in cost["items"]}
    eu = SHIPPED["eu-west-1"]
    assert got == {
        "PVC apps/data (fast) (gp3)": (200, eu["ebs:gp3"]["usd"]),
        "PVC apps/data (fast) gp3 IOPS above 3,000": (3000, eu["ebs_iops:gp3"]["usd"]),
        "PVC apps/data (fast) gp3 throughput above 125 MB/s": (125, eu["ebs_throughput:gp3"]["usd"]),
        "PVC apps/db (db) (io2)": (50, eu["ebs:io2"]["usd"]),
        # iopsPerGB x size: 10 x 50 GiB.
        "PVC apps/db (db) io2 provisioned IOPS": (500, eu["ebs_iops:io2"]["usd"]),
    }


def test_default_class_static_binding_and_unknown_classes() -> None:
    default = gp3_class("standard")
    default["inputs"]["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    objects = [default, pvc("implicit", "1.5Gi", None), pvc("static", "1200Gi", ""), pvc("elsewhere", "10Gi", "ceph")]
    cost = price_resources(objects, US_EAST_1)
    # 1.5Gi rounds up to 2 GiB; the static claim binds a pre-provisioned volume and adds nothing.
    assert [(i["name"], i["quantity"]) for i in cost["items"]] == [("PVC apps/implicit (standard) (gp3)", 2)]
    assert [u["reason"] for u in cost["unpriced"]] == [
        "PVC apps/elsewhere: StorageClass ceph is not in the plan, so its provisioner and rate are unknown"
    ]


def test_statefulset_claims_count_per_replica_and_fsx_classes_round_to_valid_capacity() -> None:
    fsx = k8s(
        "StorageClass",
        "lustre",
        {"provisioner": "fsx.csi.aws.com", "parameters": {"deploymentType": "SCRATCH_2"}},
        api="storage.k8s.io/v1",
        ns=None,
    )
    template = {
        "metadata": {"name": "data"},
        "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "100Gi"}}},
    }
    sts = k8s("StatefulSet", "db", {"spec": {"replicas": 3, "volumeClaimTemplates": [template]}}, api="apps/v1")
    cost = price_resources([gp3_class(), fsx, sts, pvc("scratch", "3000Gi", "lustre")], US_EAST_1)
    got = {i["name"]: i["quantity"] for i in cost["items"]}
    # 3000 GiB on SCRATCH_2 is created as 4800 GiB (1200, 2400, then steps of 2400).
    assert got == {
        "StatefulSet apps/db data x3 (fast) (gp3)": 300,
        "PVC apps/scratch (lustre: FSx for Lustre 4800 GiB)": 4800,
    }


def test_chart_rendered_prometheus_storage_is_priced_replicas_times_shards() -> None:
    SIZE_500 = {"requests": {"storage": "500Gi"}}
    prometheus = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "Prometheus",
        "metadata": {"name": "kps", "namespace": "monitoring"},
        "spec": {
            "replicas": 2,
            "shards": 2,
            "storage": {"volumeClaimTemplate": {"spec": {"storageClassName": "fast", "resources": SIZE_500}}},
        },
    }  # fmt: skip
    owner = "urn:pulumi:s::p::kubernetes:helm.sh/v3:Release::kps"
    derived = [derived_resource(owner, "chart kube-prometheus-stack@75.6.1", prometheus)]
    cost = price_resources([gp3_class()], US_EAST_1, derived=derived)
    [item] = cost["items"]
    assert (item["urn"], item["name"], item["quantity"]) == (
        owner,
        "Prometheus monitoring/kps storage x4 (fast) (gp3)",
        2000,
    )
    assert item["monthly"] == round(2000 * usd("us-east-1", "ebs:gp3"), 2)


# --- Karpenter node volumes ---------------------------------------------------------------------------------------


TYPES = ["g6e.xlarge", "g6e.12xlarge"]


def _karpenter(block_devices: list[dict[str, Any]] | None, ami: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    nodeclass: dict[str, Any] = ami or {"amiSelectorTerms": [{"alias": "al2023@latest"}]}
    if block_devices is not None:
        nodeclass["blockDeviceMappings"] = block_devices
    pool = k8s(
        "NodePool",
        "gpu",
        {
            "metadata": {"annotations": {"gpucloud.io/expected-nodes": "2"}},
            "spec": {
                "limits": {"nvidia.com/gpu": "8"},
                "template": {
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                        "requirements": [
                            {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": TYPES}
                        ],
                    }
                },
            },
        },
        api="karpenter.sh/v1",
        ns=None,
    )  # fmt: skip
    ec2nc = k8s("EC2NodeClass", "gpu", {"spec": nodeclass}, api="karpenter.k8s.aws/v1", ns=None)
    return [pool, ec2nc]


def test_karpenter_node_volumes_follow_the_ec2nodeclass_times_node_bounds() -> None:
    mapping = {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "200Gi", "volumeType": "gp3", "throughput": 500}}
    cost = price_resources(_karpenter([mapping]), US_EAST_1)
    volumes = {i["name"]: (i["quantity"], i["max_quantity"]) for i in cost["items"] if i["pricing"] == "storage"}
    # Expected 2 nodes; the limit of 8 GPUs allows at most 8 one-GPU g6e.xlarge nodes.
    assert volumes == {
        "gpu node volumes (gp3)": (400, 1600),
        "gpu node volumes gp3 throughput above 125 MB/s": (750, 3000),
    }


BOTTLEROCKET = {"/dev/xvda": (8, 32), "/dev/xvdb": (40, 160)}


@pytest.mark.parametrize(
    ("ami", "expected"),
    [
        ({"amiSelectorTerms": [{"alias": "al2023@latest"}]}, {"/dev/xvda": (40, 160)}),
        ({"amiSelectorTerms": [{"alias": "al2@v20240807"}]}, {"/dev/xvda": (40, 160)}),
        # Bottlerocket: a 4 GiB OS volume beside the 20 GiB data volume.
        ({"amiSelectorTerms": [{"alias": "bottlerocket@latest"}]}, BOTTLEROCKET),
        ({"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"id": "ami-0123"}]}, BOTTLEROCKET),
    ],
    ids=["al2023", "al2", "bottlerocket", "bottlerocket-family"],
)
def test_karpenter_without_block_device_mappings_gets_the_families_default_volumes(
    ami: dict[str, Any], expected: dict[str, tuple[int, int]]
) -> None:
    # Karpenter v1.12.1 amifamily DefaultEBS: 20Gi gp3; expected 2 nodes, at most 8 (the 8-GPU limit).
    cost = price_resources(_karpenter(None, ami), US_EAST_1)
    storage = [i for i in cost["items"] if i["pricing"] == "storage"]
    got = {i["name"].split()[3]: (i["quantity"], i["max_quantity"]) for i in storage}
    assert got == expected
    assert {i["unit_price"] for i in storage} == {usd("us-east-1", "ebs:gp3")}
    assert all(i["name"].endswith("default) (gp3)") for i in storage)
    assert not [u for u in cost["unpriced"] if "blockDeviceMappings" in u["reason"]]


def test_karpenter_custom_family_without_mappings_is_listed_with_the_reason() -> None:
    ami = {"amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-0123"}]}
    cost = price_resources(_karpenter(None, ami), US_EAST_1)
    assert [i for i in cost["items"] if i["pricing"] == "storage"] == []
    reasons = [u["reason"] for u in cost["unpriced"] if "sets no blockDeviceMappings" in u["reason"]]
    assert len(reasons) == 1 and "the Custom family has none" in reasons[0]
