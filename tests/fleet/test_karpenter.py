"""gpucloud.fleet.karpenter: a NodePool with its EC2NodeClass as one pool, field by field (values worked out
from the manifests by hand)."""

from __future__ import annotations

from typing import Any

from gpucloud.fleet import labels as L
from gpucloud.fleet import model as M
from gpucloud.fleet.build import Fleet
from gpucloud.fleet.values import UNKNOWN


def nodepool(spec: dict[str, Any], name: str = "np", **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name, **meta}, "spec": spec}


def node_class(spec: dict[str, Any], name: str = "nc") -> dict[str, Any]:
    return {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": name}, "spec": spec}


def pool_of(*objects: dict[str, Any]) -> M.Pool:
    (pool,) = Fleet([], objects).pools()
    return pool


def test_nodepool_fields() -> None:
    spec = {
        "replicas": 3.0,
        "limits": {"nvidia.com/gpu": 16},
        "disruption": {"consolidationPolicy": "WhenEmpty"},
        "template": {
            "metadata": {"labels": {"gpucloud.io/workload": "training"}},
            "spec": {
                "nodeClassRef": {"name": "nc"},
                "requirements": [
                    {"key": L.INSTANCE_TYPE, "operator": "In", "values": ["p5.48xlarge"]},
                    {"key": L.CAPACITY_TYPE, "operator": "In", "values": ["spot", "reserved"]},
                    {"key": L.CAPACITY_TYPE, "operator": "NotIn", "values": ["on-demand"]},
                    {"key": L.ZONE, "operator": "In", "values": ["us-east-1a"]},
                    {"key": L.ZONE, "operator": "NotIn", "values": ["us-east-1b"]},
                ],
                "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}, {"value": "v"}],
                "startupTaints": [{"key": "boot", "value": "wait", "effect": "NoExecute"}, {}],
            },
        },
    }
    pool = pool_of(nodepool(spec, labels={"gpucloud.io/pool": "np"}))
    assert (pool.name, pool.path, pool.types_from) == ("np", "Karpenter NodePool", "spec.template.spec.requirements")
    assert pool.instance_types == ("p5.48xlarge",) and pool.named_types == ("p5.48xlarge",)
    assert len(pool.requirements) == 5
    assert pool.markets == ("spot", "reserved") and pool.zones == frozenset({"us-east-1a"})
    assert pool.counts == M.Counts(0, 3, None) and pool.limits == {"nvidia.com/gpu": 16}
    assert pool.update_strategy == {"consolidationPolicy": "WhenEmpty"}
    assert pool.marks == ({"gpucloud.io/workload": "training"}, {"gpucloud.io/pool": "np"})
    assert pool.labels == {"gpucloud.io/workload": "training", L.NODEPOOL: "np"}
    assert pool.taints == (M.Taint("nvidia.com/gpu", "", "NoSchedule"), M.Taint("", "v", ""))
    assert pool.startup_taints == (M.Taint("boot", "wait", "NoExecute"), M.Taint("", "", ""))
    assert pool.node_class == "nc" and pool.unknown == {}


def test_nodepool_unknowns_and_defaults() -> None:
    pool = pool_of(nodepool({"template": {"spec": {"requirements": UNKNOWN}}}))
    assert pool.unknown == {"instance_types": "spec.template.spec.requirements"} and pool.requirements == ()
    assert pool.markets == ("on-demand",) and pool.zones is None and pool.counts == M.Counts(0, None, None)
    odd = pool_of(nodepool({"template": {"spec": {"requirements": "odd"}}}))
    assert odd.unknown == {} and odd.requirements == ()
    on_annotation = pool_of(nodepool({}, annotations={L.EXPECTED_NODES: "4"}))
    assert on_annotation.counts == M.Counts(0, 4, None)
    replicas_win = pool_of(nodepool({"replicas": 2}, annotations={L.EXPECTED_NODES: "4"}))
    assert replicas_win.counts.desired == 2


def test_node_class_fields() -> None:
    nc = node_class(
        {
            "amiSelectorTerms": [{"id": "ami-1"}, {"alias": "al2023@v20240807"}],
            "metadataOptions": {"httpTokens": "required"},
            "blockDeviceMappings": [
                {
                    "deviceName": "/dev/xvda",
                    "ebs": {
                        "volumeSize": "1Gi",
                        "volumeType": "gp3",
                        "iops": 3000,
                        "throughput": 125,
                        "encrypted": True,
                        "kmsKeyID": "arn:key",
                        "deleteOnTermination": "false",
                        "snapshotID": "snap-1",
                    },
                },
                {"ebs": {"volumeSize": 80}},
                {"ebs": {}},
            ],
            "associatePublicIPAddress": False,
            "userData": "[settings.kubernetes]\n",
            "tags": {"team": "ml"},
        }
    )
    spec = {"template": {"spec": {"nodeClassRef": {"name": "nc"}}}}
    pool = pool_of(nodepool(spec), nc)
    assert (pool.ami_family, pool.ami_release) == ("al2023", "v20240807")
    assert pool.metadata_options == {"httpTokens": "required"} and pool.public_ip is False
    assert pool.block_devices == (
        M.BlockDevice("/dev/xvda", 1, "gp3", 3000, 125, True, "arn:key", (), False, "snap-1"),
        M.BlockDevice(None, 80, None),
        M.BlockDevice(None, None, None),
    )
    assert (pool.user_data, pool.user_data_known, pool.tags) == ("[settings.kubernetes]\n", True, {"team": "ml"})
    by_id = node_class({"amiFamily": "Bottlerocket", "amiSelectorTerms": [{"tags": {"a": "b"}}, {"id": "ami-2"}]})
    pool = pool_of(nodepool(spec), by_id)
    assert (pool.ami_family, pool.ami_release, pool.user_data, pool.user_data_known) == (
        "Bottlerocket", "ami-2", None, True,
    )  # fmt: skip
    bare = pool_of(nodepool(spec), node_class({"userData": UNKNOWN}))
    assert (bare.ami_family, bare.ami_release, bare.user_data, bare.user_data_known) == ("", "", None, False)
    alias_at = pool_of(nodepool(spec), node_class({"amiSelectorTerms": [{"alias": "a@b@c"}]}))
    assert (alias_at.ami_family, alias_at.ami_release) == ("a", "b@c")
    unmatched = pool_of(nodepool({"template": {"spec": {"nodeClassRef": {"name": "other"}}}}), nc)
    assert (unmatched.ami_family, unmatched.block_devices) == ("", ())
