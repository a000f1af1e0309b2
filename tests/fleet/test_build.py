"""gpucloud.fleet.build: which resources and rendered objects become pools, in which order, and what finish()
adds to every pool (catalog specs, accelerators, normalised labels, marks, named types)."""

from __future__ import annotations

from typing import Any

from gpucloud import fleet
from gpucloud.fleet import labels as L
from gpucloud.fleet import types as T
from gpucloud.fleet.build import NODE_TEMPLATE_LABEL, Fleet
from gpucloud.fleet.joins import Record
from gpucloud.fleet.model import Accelerator


def res(type_: str, name: str, inputs: dict[str, Any]) -> dict[str, Any]:
    return {"urn": f"urn:pulumi:dev::p::{type_}::{name}", "type": type_, "name": name, "inputs": inputs}


def nodepool(name: str, node_class: str, api: str = "karpenter.sh/v1") -> dict[str, Any]:
    return {
        "apiVersion": api,
        "kind": "NodePool",
        "metadata": {"name": name},
        "spec": {"template": {"spec": {"nodeClassRef": {"name": node_class}, "requirements": []}}},
    }


def node_class(name: str | None, family: str, api: str = "karpenter.k8s.aws/v1") -> dict[str, Any]:
    meta = {"name": name} if name else {}
    return {"apiVersion": api, "kind": "EC2NodeClass", "metadata": meta, "spec": {"amiFamily": family}}


def test_pools_are_the_launch_paths_in_order_then_nodepools() -> None:
    resources = [
        res(T.SUBNET, "s", {}),
        res(T.INSTANCE, "vm", {"instanceType": "p5.48xlarge"}),
        res(T.KARPENTER_NODEPOOL, "np-res", {"metadata": {"name": "np-res"}}),
        res(T.CAPACITY_RESERVATION, "cr", {"instanceType": "g5.xlarge", "instanceCount": 1.0}),
    ]
    objects = [
        nodepool("np-obj", "x"),
        {"apiVersion": "other.sh/v1", "kind": "NodePool", "metadata": {"name": "not-karpenter"}},
        {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "claim"}},
    ]
    found = fleet.pools(resources, objects)
    assert [(p.name, p.path) for p in found] == [
        ("vm", "instance"),
        ("cr", "capacity reservation"),
        ("np-res", "Karpenter NodePool"),
        ("np-obj", "Karpenter NodePool"),
    ]
    assert found[3].urn == "object:NodePool/np-obj#0"


def test_finish_adds_specs_accelerators_and_named_types() -> None:
    (pool,) = fleet.pools([res(T.NODE_GROUP, "ng", {"instanceTypes": ["p5.48xlarge", "m5.large", "zz.huge"]})])
    # The GPU catalog knows p5.48xlarge only.
    assert sorted(pool.specs) == ["p5.48xlarge"] and pool.specs["p5.48xlarge"].accelerator_count == 8
    assert pool.accelerators == (
        Accelerator("p5.48xlarge", "H100", "h100", "nvidia", "gpu", 8, 80.0, "nvidia.com/gpu"),
    )
    assert pool.accelerated and pool.accelerators_per_node == 8
    assert pool.named_types == ("p5.48xlarge", "m5.large", "zz.huge")
    (cpu,) = fleet.pools([res(T.NODE_GROUP, "cpu", {"instanceTypes": ["m5.large"]})])
    assert (cpu.accelerators, cpu.accelerated, cpu.accelerators_per_node) == ((), False, 0)


def test_finish_normalises_labels_and_takes_marks_from_labels_then_tags() -> None:
    ng = res(
        T.NODE_GROUP,
        "ng",
        {"instanceTypes": ["g5.xlarge"], "labels": {"gpucloud.io/pool": "a"}, "tags": {"gpucloud.io/pool": "b"}},
    )
    (pool,) = fleet.pools([ng])
    assert pool.marks == ({"gpucloud.io/pool": "a"}, {"gpucloud.io/pool": "b"})
    asg_tags = [
        {"key": NODE_TEMPLATE_LABEL + "gpucloud.io/workload", "value": "training"},
        {"key": "team", "value": "ml"},
    ]
    asg = res(T.AUTOSCALING_GROUP, "asg", {"maxSize": 1.0, "tags": asg_tags})
    (pool,) = fleet.pools([asg])
    assert pool.marks == ({"gpucloud.io/workload": "training", "team": "ml"},)
    (pool,) = fleet.pools([res(T.CAPACITY_RESERVATION, "cr", {"instanceType": "g5.xlarge", "tags": "odd"})])
    assert pool.marks == ()
    # Labels are stored under their normalised keys (the deprecated beta instance-type label).
    beta = res(
        T.NODE_GROUP, "beta", {"instanceTypes": ["g5.xlarge"], "labels": {"beta.kubernetes.io/instance-type": "x"}}
    )
    (pool,) = fleet.pools([beta])
    assert pool.labels.get(L.INSTANCE_TYPE) == "x"


def test_node_classes_by_name_records_first_then_objects() -> None:
    by_meta = res(T.EC2_NODE_CLASS, "nc-res", {"metadata": {"name": "gpu"}, "spec": {"amiFamily": "AL2023"}})
    by_name = res(T.EC2_NODE_CLASS, "plain", {"spec": {"amiFamily": "Bottlerocket"}})
    objects = [
        node_class("gpu", "Custom"),  # the registered one of that name wins
        node_class("obj", "AL2"),
        node_class(None, "Windows2022"),
        node_class("beta", "AL2", api="karpenter.k8s.aws/v1beta1"),
        {"apiVersion": "other/v1", "kind": "EC2NodeClass", "metadata": {"name": "other"}},
    ]
    f = Fleet([by_meta, by_name], objects)
    classes = f._node_classes()
    assert sorted(classes) == ["beta", "gpu", "obj", "object-2", "plain"]
    assert classes["gpu"].urn == by_meta["urn"] and classes["plain"].urn == by_name["urn"]
    assert classes["obj"].inputs["spec"] == {"amiFamily": "AL2"}
    assert isinstance(classes["object-2"], Record)
    pools = {
        p.name: p
        for p in Fleet([by_meta], [nodepool("np", "gpu"), nodepool("np2", "obj"), objects[1]], region="x").pools()
    }
    assert (pools["np"].ami_family, pools["np2"].ami_family, pools["np"].region) == ("AL2023", "AL2", "x")


def test_one_gpu_types_region_and_requirement_only_pools() -> None:
    (pool,) = fleet.pools([res(T.NODE_GROUP, "ng", {"instanceTypes": ["g5.xlarge"]})], region="eu-west-1")
    assert [a.count for a in pool.accelerators] == [1] and pool.region == "eu-west-1"
    # Types only a requirement set admits are not "named": named_types stays empty.
    lt = res(T.LAUNCH_TEMPLATE, "lt", {})
    mip = {
        "launchTemplate": {
            "launchTemplateSpecification": {"launchTemplateName": "lt"},
            "overrides": [{"instanceRequirements": {"acceleratorCount": {"min": 8.0}, "acceleratorNames": ["h100"]}}],
        }
    }
    asg = res(T.AUTOSCALING_GROUP, "asg", {"maxSize": 1.0, "mixedInstancesPolicy": mip})
    pool = {p.name: p for p in fleet.pools([lt, asg])}["asg"]
    assert pool.named_types == () and "p5.48xlarge" in pool.instance_types


def test_a_rendered_node_class_is_recorded_under_its_index() -> None:
    f = Fleet([], [nodepool("np", "gpu"), node_class("gpu", "AL2")])
    assert f._node_classes()["gpu"].urn == "object:EC2NodeClass/gpu#1"
