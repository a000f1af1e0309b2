"""The one capacity reader (capacity.py, pools.py) and the GPU rules that read through it."""

import pytest

from gpucloud import catalog
from gpucloud.fleet.labels import instance_labels
from gpucloud.guard.harness import Res, flagged, resource_messages, stack_flagged, stack_messages
from gpucloud.policies.gpucloud_policies import capacity as c
from gpucloud.policies.gpucloud_policies.pools import pools

LT, LC, ASG, NG = c.LAUNCH_TEMPLATE, c.LAUNCH_CONFIG, c.ASG, c.NODE_GROUP
ALL = len(catalog.get_catalog())
CAT, GEN = "karpenter.k8s.aws/instance-category", "karpenter.k8s.aws/instance-generation"


def nodepool(*reqs, limits=None, labels=None, version="v1"):
    spec = {"template": {"spec": {"requirements": [{"key": k, "operator": op, "values": v} for k, op, v in reqs]}}}
    if limits is not None:
        spec["limits"] = limits
    if labels is not None:
        spec["template"]["metadata"] = {"labels": labels}
    return {"spec": spec}


def families(props, rt=c.NODE_POOL):
    return sorted({f for ch in c.choices(rt, props) for f in ch.families})


# --- named types on every path ---------------------------------------------------------------------------


def test_type_refs_on_every_capacity_path():
    assert c.type_refs(NG, {"instanceTypes": ["p5.48xlarge", "g6e.xlarge"]}) == [
        c.TypeRef("instanceTypes[0]", "p5.48xlarge"),
        c.TypeRef("instanceTypes[1]", "g6e.xlarge"),
    ]
    for rt in (LT, LC, c.INSTANCE, c.SPOT_REQUEST, c.CAPACITY_RESERVATION):
        assert c.type_refs(rt, {"instanceType": "p5.48xlarge"}) == [c.TypeRef("instanceType", "p5.48xlarge")]
        assert c.type_refs(rt, {}) == []
    asg = {"mixedInstancesPolicy": {"launchTemplate": {"overrides": [{"instanceType": "p5.48xlarge"}, {}]}}}
    assert c.type_refs(ASG, asg) == [
        c.TypeRef("mixedInstancesPolicy.launchTemplate.overrides[0].instanceType", "p5.48xlarge")
    ]
    fleet = {"launchTemplateConfigs": [{"overrides": [{"instanceType": "g6e.xlarge"}]}, {"overrides": [{}]}]}
    assert c.type_refs(c.FLEET, fleet) == [
        c.TypeRef("launchTemplateConfigs[0].overrides[0].instanceType", "g6e.xlarge")
    ]
    sfr = {
        "launchSpecifications": [{"instanceType": "p4d.24xlarge"}],
        "launchTemplateConfigs": [{"overrides": [{"instanceType": "g6e.xlarge"}]}],
    }
    assert c.type_refs(c.SPOT_FLEET, sfr) == [
        c.TypeRef("launchSpecifications[0].instanceType", "p4d.24xlarge"),
        c.TypeRef("launchTemplateConfigs[0].overrides[0].instanceType", "g6e.xlarge"),
    ]
    np = nodepool((c.KEY_INSTANCE_TYPE, "In", ["p5.48xlarge"]), (c.KEY_INSTANCE_TYPE, "NotIn", ["g5.xlarge"]))
    assert c.type_refs(c.NODE_POOL_V1BETA1, np) == [c.TypeRef("spec.template.spec.requirements[0]", "p5.48xlarge")]
    assert c.type_refs("aws:s3/bucket:Bucket", {"instanceType": "p5.48xlarge"}) == []


def test_choices_name_types_and_resolve_requirement_sets():
    fleet = {
        "launchTemplateConfigs": [
            {"overrides": [{"instanceType": "p5.48xlarge"}, {"instanceRequirements": {"acceleratorNames": ["h100"]}}]}
        ]
    }
    got = c.choices(c.FLEET, fleet)
    assert got == [
        c.Choice("launchTemplateConfigs[0].overrides[0].instanceType", "", ("p5.48xlarge",)),
        c.Choice(
            "launchTemplateConfigs[0].overrides[1].instanceRequirements",
            "instanceRequirements",
            ("p5.48xlarge", "p5.4xlarge"),
        ),
    ]
    assert got[1].families == ["p5"]
    assert c.choice_types(c.FLEET, fleet) == ["p5.48xlarge", "p5.48xlarge", "p5.4xlarge"]
    assert c.choices(c.NODE_POOL, nodepool(("topology.kubernetes.io/zone", "In", ["us-east-1a"]))) == []


# --- attribute-based instance requirements (EC2 semantics: what is left out admits anything) ---------------


@pytest.mark.parametrize(
    ("req", "want"),
    [
        ({"acceleratorNames": ["a100"]}, ["p4d", "p4de"]),
        ({"acceleratorNames": ["H100"]}, ["p5"]),
        # EC2's names (AcceleratorName enum): "inferentia" is Inf1's chip, Inf2's is "inferentia2".
        ({"acceleratorNames": ["inferentia"]}, []),
        ({"acceleratorNames": ["inferentia2"]}, ["inf2"]),
        ({"acceleratorNames": ["trainium2"]}, ["trn2"]),
        ({"acceleratorNames": ["radeon-pro-v520"]}, ["g4ad"]),
        ({"acceleratorManufacturers": ["amd"]}, ["g4ad"]),
        ({"acceleratorManufacturers": ["amazon-web-services"]}, ["inf2", "trn1", "trn1n", "trn2"]),
        ({"acceleratorTypes": ["inference"]}, ["inf2", "trn1", "trn1n", "trn2"]),
        ({"acceleratorCount": {"max": 0}}, []),
        ({"acceleratorCount": {"min": 16}}, ["trn1", "trn1n", "trn2"]),
        (
            {
                "acceleratorCount": {"min": 8, "max": 8},
                "acceleratorManufacturers": ["nvidia"],
                "acceleratorTotalMemoryMib": {"min": 1_000_000},
            },
            ["p5e", "p5en", "p6-b200", "p6-b300"],
        ),
        ({"allowedInstanceTypes": ["g6e.*", "p5.48*"]}, ["g6e", "p5"]),
        ({"acceleratorNames": ["t4"], "excludedInstanceTypes": ["g4dn.*"]}, []),
        ({"vcpuCount": {"min": 190}, "memoryMib": {"min": 2_100_000}, "acceleratorTypes": ["gpu"]}, ["p6-b300"]),
    ],
)
def test_attribute_based_requirements_resolve_against_the_catalog(req, want):
    asg = {"mixedInstancesPolicy": {"launchTemplate": {"overrides": [{"instanceRequirements": req}]}}}
    assert families(asg, ASG) == want


def test_attribute_based_requirements_without_accelerator_bounds_admit_every_accelerator():
    req = {"vcpuCount": {"min": 1}, "memoryMib": {"min": 1}}
    asg = {"mixedInstancesPolicy": {"launchTemplate": {"overrides": [{"instanceRequirements": req}]}}}
    [choice] = c.choices(ASG, asg)
    assert len(choice.instance_types) == ALL
    assert choice.path == "mixedInstancesPolicy.launchTemplate.overrides[0].instanceRequirements"


# --- Karpenter requirements ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reqs", "want"),
    [
        ([(c.KEY_FAMILY, "In", ["g6e", "p5"])], ["g6e", "p5"]),
        ([(CAT, "In", ["trn"])], ["trn1", "trn1n", "trn2"]),
        (
            [
                (CAT, "In", ["p"]),
                (GEN, "Gt", ["4"]),
            ],
            ["p5", "p5e", "p5en", "p6-b200", "p6-b300"],
        ),
        (
            [
                (CAT, "In", ["p"]),
                (GEN, "Lt", ["4"]),
            ],
            ["p3", "p3dn"],
        ),
        (
            [
                (CAT, "In", ["p"]),
                (GEN, "Gte", ["6"]),
            ],
            ["p6-b200", "p6-b300"],
        ),
        (
            [
                (CAT, "In", ["p"]),
                (GEN, "Lte", ["3"]),
            ],
            ["p3", "p3dn"],
        ),
        ([(c.KEY_GPU_NAME, "In", ["l40s"])], ["g6e"]),
        ([(c.KEY_GPU_NAME, "In", ["a100"])], ["p4d", "p4de"]),
        ([("karpenter.k8s.aws/instance-gpu-manufacturer", "In", ["amd"])], ["g4ad"]),
        ([(c.KEY_GPU_COUNT, "Gt", ["8"])], []),
        # gr6/gr6f's Karpenter instance-category is "gr", not "g": NotIn g, p leaves them admitted.
        ([(c.KEY_GPU_COUNT, "Exists", []), (CAT, "NotIn", ["g", "p"])], ["gr6", "gr6f"]),
        ([(c.KEY_GPU_COUNT, "DoesNotExist", [])], ["inf2", "trn1", "trn1n", "trn2"]),
        # Karpenter labels EC2's name (karpenter-provider-aws instance-types reference: inf2 "inferentia2").
        ([("karpenter.k8s.aws/instance-accelerator-name", "In", ["inferentia2"])], ["inf2"]),
        ([("karpenter.k8s.aws/instance-accelerator-name", "In", ["trainium"])], ["trn1", "trn1n"]),
        ([("karpenter.k8s.aws/instance-gpu-memory", "Gt", ["100000"])], ["p5e", "p5en", "p6-b200", "p6-b300"]),
        ([(c.KEY_FAMILY, "In", ["p5"]), ("karpenter.k8s.aws/instance-size", "In", ["4xlarge"])], ["p5"]),
        ([(c.KEY_FAMILY, "In", ["g6e"]), ("karpenter.k8s.aws/instance-cpu", "Lt", ["5"])], ["g6e"]),
        ([(c.KEY_FAMILY, "In", ["g6e"]), ("karpenter.k8s.aws/instance-memory", "Gt", ["2000000"])], []),
        # A numeric requirement without one integer bound is refused by the API: undecided, so it admits (fail
        # closed: every type stays judged).
        ([(c.KEY_GPU_COUNT, "Gt", ["x"])], sorted({s.family for s in catalog.get_catalog()})),
        ([(c.KEY_GPU_COUNT, "Gt", [])], sorted({s.family for s in catalog.get_catalog()})),
        ([(c.KEY_FAMILY, "Weird", ["g6e"])], sorted({s.family for s in catalog.get_catalog()})),
    ],
)
def test_nodepool_requirements_resolve_against_the_catalog(reqs, want):
    assert families(nodepool(*reqs)) == want


def test_nodepool_families_and_gpu_detection():
    assert c.nodepool_families(nodepool()) == (None, "")
    assert c.nodepool_families(nodepool(("kubernetes.io/arch", "In", ["amd64"]))) == (None, "")
    # Requirements that narrow nothing leave the NodePool unbounded.
    assert c.nodepool_families(nodepool((c.KEY_FAMILY, "NotIn", ["c7i"]))) == (None, "")
    fams, via = c.nodepool_families(nodepool((CAT, "In", ["g"])))
    assert fams == {"g4ad", "g4dn", "g5", "g5g", "g6", "g6e", "g6f", "g7", "g7e"}
    assert via == "requirements karpenter.k8s.aws/instance-category In ['g']"
    _, via = c.nodepool_families(nodepool((c.KEY_GPU_COUNT, "Exists", []), (c.KEY_FAMILY, "In", ["p5"])))
    assert via == f"requirements {c.KEY_GPU_COUNT} Exists and {c.KEY_FAMILY} In ['p5']"
    assert c.nodepool_is_gpu(nodepool(limits={"nvidia.com/gpu": "8"}))
    assert c.nodepool_is_gpu({"spec": {"template": {"spec": {"taints": [{"key": "nvidia.com/gpu"}]}}}})
    assert c.nodepool_is_gpu(nodepool((c.KEY_GPU_COUNT, "Gt", ["0"])))
    assert c.nodepool_is_gpu(nodepool((c.KEY_INSTANCE_TYPE, "In", ["p5.48xlarge"])))
    assert c.nodepool_is_gpu(nodepool((c.KEY_FAMILY, "In", ["gr6"])))
    assert c.nodepool_is_gpu(nodepool((CAT, "In", ["c", "g"])))
    assert not c.nodepool_is_gpu(nodepool((CAT, "In", ["c", "m"])))
    assert not c.nodepool_is_gpu(nodepool(limits={"cpu": "100"}))
    assert c.families_for_gpu_name(" H100 ") == frozenset({"p5"})


def test_labels_follow_karpenter_names():
    # karpenter-provider-aws v1.12.1 website/content/en/v1.11/reference/instance-types.md gives these values.
    labels = instance_labels(c.spec("p6-b200.48xlarge"))
    assert labels["karpenter.k8s.aws/instance-category"] == "p"
    assert labels["karpenter.k8s.aws/instance-generation"] == "6"
    assert labels["karpenter.k8s.aws/instance-family"] == "p6-b200"
    assert labels["karpenter.k8s.aws/instance-size"] == "48xlarge"
    assert labels["karpenter.k8s.aws/instance-gpu-name"] == "b200"
    assert labels["karpenter.k8s.aws/instance-gpu-count"] == "8"
    assert instance_labels(c.spec("p4d.24xlarge"))["karpenter.k8s.aws/instance-gpu-name"] == "a100"
    trn = instance_labels(c.spec("trn2.48xlarge"))
    assert trn["karpenter.k8s.aws/instance-accelerator-name"] == "trainium2"
    assert trn["karpenter.k8s.aws/instance-accelerator-manufacturer"] == "aws"
    assert "karpenter.k8s.aws/instance-gpu-count" not in trn
    assert c.accelerator_names(c.spec("p4d.24xlarge")) == {"a100-40gb", "a100"}
    assert c.accelerator_names(c.spec("g6.xlarge")) == {"l4"}
    assert c.accelerator_names(c.spec("inf2.xlarge")) == {"inferentia2"}


# --- size and purchase option ----------------------------------------------------------------------------


def test_max_and_min_size():
    assert c.max_size(NG, {"scalingConfig": {"maxSize": 4.0}}) == 4
    assert c.max_size(ASG, {"maxSize": 3.0}) == 3
    assert c.max_size(c.FLEET, {"targetCapacitySpecification": {"totalTargetCapacity": 7.0}}) == 7
    assert c.max_size(c.SPOT_FLEET, {"targetCapacity": 5.0}) == 5
    assert c.max_size(c.CAPACITY_RESERVATION, {"instanceCount": 6.0}) == 6
    assert c.max_size(c.INSTANCE, {}) == 1 and c.max_size(c.SPOT_REQUEST, {}) == 1
    assert c.max_size(LT, {"maxSize": 9.0}) is None
    assert c.min_size(NG, {"scalingConfig": {"minSize": 1.0}}) == 1
    assert c.min_size(ASG, {"minSize": 2.0}) == 2
    assert c.min_size(c.FLEET, {"minSize": 2.0}) is None


@pytest.mark.parametrize(
    ("rt", "props", "want"),
    [
        (NG, {}, ["on_demand"]),
        (NG, {"capacityType": "SPOT"}, ["spot"]),
        (NG, {"capacityType": "CAPACITY_BLOCK"}, ["capacity_block"]),
        (LT, {}, []),
        (c.INSTANCE, {}, ["on_demand"]),
        (LT, {"instanceMarketOptions": {"marketType": "spot"}}, ["spot"]),
        (c.INSTANCE, {"instanceMarketOptions": {"marketType": "capacity-block"}}, ["capacity_block"]),
        (LT, {"instanceMarketOptions": {"marketType": "other"}}, ["on_demand"]),
        (c.SPOT_REQUEST, {}, ["spot"]),
        (LC, {}, ["on_demand"]),
        (LC, {"spotPrice": "1.5"}, ["spot"]),
        (ASG, {}, []),
        (ASG, {"mixedInstancesPolicy": {"instancesDistribution": {}}}, ["on_demand"]),
        (
            ASG,
            {"mixedInstancesPolicy": {"instancesDistribution": {"onDemandPercentageAboveBaseCapacity": 0.0}}},
            ["spot"],
        ),
        (
            ASG,
            {
                "mixedInstancesPolicy": {
                    "instancesDistribution": {"onDemandBaseCapacity": 1.0, "onDemandPercentageAboveBaseCapacity": 0.0}
                }
            },
            ["on_demand", "spot"],
        ),
        (
            ASG,
            {"mixedInstancesPolicy": {"instancesDistribution": {"onDemandPercentageAboveBaseCapacity": 50.0}}},
            ["on_demand", "spot"],
        ),
        (c.FLEET, {}, ["on_demand"]),
        (c.FLEET, {"targetCapacitySpecification": {"defaultTargetCapacityType": "spot"}}, ["spot"]),
        (c.FLEET, {"targetCapacitySpecification": {"defaultTargetCapacityType": "capacity-block"}}, ["capacity_block"]),
        (
            c.FLEET,
            {"targetCapacitySpecification": {"defaultTargetCapacityType": "on-demand", "spotTargetCapacity": 2.0}},
            ["on_demand", "spot"],
        ),
        (
            c.FLEET,
            {"targetCapacitySpecification": {"defaultTargetCapacityType": "spot", "onDemandTargetCapacity": 1.0}},
            ["on_demand", "spot"],
        ),
        (c.SPOT_FLEET, {}, ["spot"]),
        (c.SPOT_FLEET, {"onDemandTargetCapacity": 1.0}, ["on_demand", "spot"]),
        (c.NODE_POOL, nodepool(), ["on_demand"]),
        (c.NODE_POOL, nodepool((c.KEY_CAPACITY_TYPE, "In", ["spot", "on-demand"])), ["on_demand", "spot"]),
        (c.NODE_POOL_V1BETA1, nodepool((c.KEY_CAPACITY_TYPE, "In", ["reserved"])), ["capacity_block"]),
        (c.CAPACITY_RESERVATION, {}, []),
    ],
)
def test_markets(rt, props, want):
    assert c.markets(rt, props) == want


def test_spot_nodes():
    dist = {
        "mixedInstancesPolicy": {
            "instancesDistribution": {"onDemandBaseCapacity": 2.0, "onDemandPercentageAboveBaseCapacity": 25.0}
        }
    }
    assert c.spot_nodes(ASG, dist, 10) == 6
    assert c.spot_nodes(ASG, {"mixedInstancesPolicy": {"instancesDistribution": {}}}, 10) == 0
    assert c.spot_nodes(ASG, {}, 10) == 0
    assert c.spot_nodes(ASG, dist, 1) == 0
    spot = {"targetCapacitySpecification": {"defaultTargetCapacityType": "spot", "onDemandTargetCapacity": 3.0}}
    assert c.spot_nodes(c.FLEET, spot, 10) == 7
    assert c.spot_nodes(c.FLEET, spot, 2) == 0
    od = {"targetCapacitySpecification": {"defaultTargetCapacityType": "on-demand", "spotTargetCapacity": 4.0}}
    assert c.spot_nodes(c.FLEET, od, 10) == 4
    assert c.spot_nodes(c.FLEET, od, 3) == 3
    assert c.spot_nodes(c.SPOT_FLEET, {"onDemandTargetCapacity": 1.0}, 5) == 4
    assert c.spot_nodes(c.SPOT_FLEET, {"onDemandTargetCapacity": 9.0}, 5) == 0
    assert c.spot_nodes(NG, {"capacityType": "SPOT"}, 5) == 5
    assert c.spot_nodes(NG, {}, 5) == 0


# --- marks: workload kind and interruptibility -----------------------------------------------------------


def test_workload_kinds_come_from_the_gpucloud_spec():
    assert c.WORKLOAD_KINDS == ("training", "inference", "hpc", "rendering")
    assert c.is_training("training", {"training"})
    assert c.is_training("pretraining", {"training"})
    assert c.is_training("hpc", {"training", "hpc"})
    assert not c.is_training("hpc", {"training"})
    assert not c.is_training("inference", {"training"})
    assert not c.is_training("", {"training"})


def test_marks_are_read_from_labels_tags_asg_tags_template_tags_and_nodepool_labels():
    keys = [c.WORKLOAD_KEY]
    assert c.workload(NG, {"labels": {c.WORKLOAD_KEY: " Training "}}, keys) == "training"
    assert c.workload(NG, {"tags": {c.WORKLOAD_KEY: "hpc"}}, keys) == "hpc"
    asg = {"tags": [{"key": "x", "value": "y"}, {"key": c.WORKLOAD_KEY, "value": "inference"}]}
    assert c.workload(ASG, asg, keys) == "inference"
    lt = {"tagSpecifications": [{"resourceType": "instance", "tags": {c.WORKLOAD_KEY: "rendering"}}]}
    assert c.workload(LT, lt, keys) == "rendering"
    assert c.workload(NG, lt, keys) == ""
    np = nodepool(labels={c.WORKLOAD_KEY: "training"})
    assert c.workload(c.NODE_POOL_V1BETA1, np, keys) == "training"
    assert c.workload(c.NODE_POOL, {"metadata": {"labels": {c.WORKLOAD_KEY: "hpc"}}}, keys) == "hpc"
    assert c.workload(NG, {"labels": {c.WORKLOAD_KEY: 3}}, keys) == ""
    assert c.workload(NG, {"labels": {"other": "training"}}, keys) == ""
    assert c.mark(NG, {"labels": {"b": "2"}, "tags": {"a": "1"}}, ["a", "b"]) == "2"
    assert c.non_interruptible(NG, {"labels": {c.INTERRUPTIBLE_KEY: "false"}})
    assert c.non_interruptible(NG, {"tags": {c.INTERRUPTIBLE_KEY: "False"}})
    assert not c.non_interruptible(NG, {"labels": {c.INTERRUPTIBLE_KEY: "true"}})
    assert not c.non_interruptible(NG, {})


# --- pools -----------------------------------------------------------------------------------------------


def test_count_cap_reads_pools_through_templates_and_configurations():
    resources = [
        Res(LT, "lt", {"instanceType": "p5.48xlarge", "instanceMarketOptions": {"marketType": "spot"}}),
        Res(LC, "lc", {"instanceType": "g6e.12xlarge", "spotPrice": "2"}),
        Res(ASG, "on-lt", {"maxSize": 2.0}, deps={"launchTemplate": ["lt"]}),
        Res(ASG, "on-lc", {"maxSize": 3.0}, deps={"launchConfiguration": ["lc"]}),
        Res(c.INSTANCE, "vm", {}, deps={"launchTemplate": ["lt"]}),
        Res(
            c.FLEET,
            "fleet",
            {"targetCapacitySpecification": {"totalTargetCapacity": 4.0}},
            deps={"launchTemplateConfigs": ["lt"]},
        ),
        Res(c.CAPACITY_RESERVATION, "cr", {"instanceType": "p5.48xlarge", "instanceCount": 2.0}),
        Res(NG, "ng", {"instanceTypes": ["g6e.xlarge"], "scalingConfig": {"maxSize": 5.0}}),
    ]
    assert stack_messages("gpu-count-cap", resources) == []
    capped = dict(stack_messages("gpu-count-cap", resources, {"maxGpusPerPool": 7, "maxGpusPerStack": 1000}))
    assert set(capped) == {"on-lt", "on-lc", "vm", "fleet", "cr"}
    assert "max size 3 x 4 GPUs per instance" in capped["on-lc"]
    assert "max size 4 x 8 GPUs per instance" in capped["fleet"]


def _policy_resources(resources):
    from pulumi_policy import PolicyResource
    from pulumi_policy.proxy import unknown_checking_proxy

    from gpucloud.guard.harness import options, urn

    prs = {
        r.name: PolicyResource(
            r.type, unknown_checking_proxy(dict(r.props)), urn(r.type, r.name), r.name, options(), None, None, [], {}
        )
        for r in resources
    }
    for r in resources:
        prs[r.name].property_dependencies = {k: [prs[n] for n in names] for k, names in r.deps.items()}
    return list(prs.values())


def test_pool_objects():
    resources = [
        Res(LT, "lt", {"instanceType": "p5.48xlarge", "instanceMarketOptions": {"marketType": "spot"}}),
        Res(LC, "lc", {"instanceType": "g6e.12xlarge", "spotPrice": "2"}),
        Res(ASG, "on-lt", {"maxSize": 2.0, "vpcZoneIdentifiers": ["s1", "s2"]}, deps={"launchTemplate": ["lt"]}),
        Res(ASG, "on-lc", {"maxSize": 3.0}, deps={"launchConfiguration": ["lc"]}),
        Res(c.INSTANCE, "vm", {"subnetId": "s"}, deps={"launchTemplate": ["lt"]}),
        Res(
            c.INSTANCE,
            "vm-cb",
            {"instanceMarketOptions": {"marketType": "capacity-block"}},
            deps={"launchTemplate": ["lt"]},
        ),
        Res(
            ASG,
            "mixed",
            {
                "maxSize": 4.0,
                "mixedInstancesPolicy": {"instancesDistribution": {"onDemandPercentageAboveBaseCapacity": 50.0}},
            },
            deps={"mixedInstancesPolicy": ["lt"]},
        ),
        Res(NG, "ng", {"instanceTypes": ["g6e.xlarge"], "capacityType": "SPOT", "scalingConfig": {"maxSize": 5.0}}),
        Res(ASG, "bare", {"maxSize": 1.0}),
    ]
    by = {p.resource.name: p for p in pools(_policy_resources(resources))}
    assert list(by) == ["on-lt", "on-lc", "vm", "vm-cb", "mixed", "ng", "bare"]
    assert by["on-lt"].instance_types == ["p5.48xlarge"] and by["on-lt"].markets == ["spot"]
    assert by["on-lt"].launch_template.name == "lt" and by["on-lt"].subnet_count == 2
    assert by["on-lc"].instance_types == ["g6e.12xlarge"] and by["on-lc"].markets == ["spot"]
    assert by["on-lc"].launch_template is None
    assert by["vm"].markets == ["spot"] and by["vm"].max_size == 1
    assert by["vm-cb"].markets == ["capacity_block"]
    assert by["mixed"].markets == ["on_demand", "spot"] and by["mixed"].spot_gpus == 16
    assert by["mixed"].max_gpus == 32 and by["mixed"].gpus_per_node == 8 and by["mixed"].is_gpu
    assert by["ng"].spot_gpus == 5 and by["ng"].max_gpus == 5
    assert by["on-lt"].spot_gpus == 16
    # Joined to no template or configuration: what it launches is unknown (the fleet fails closed), on-demand.
    assert by["bare"].known_markets() == ["on_demand"] and by["bare"].instance_types == [] and not by["bare"].is_gpu
    assert by["bare"].error is not None and by["bare"].error.props == ["launchTemplate"]


# --- GPU rules through the reader ------------------------------------------------------------------------


def test_family_allowlist_reads_requirement_sets():
    allowed = {"allowedFamilies": ["g6e", "p5"]}
    fleet_ok = {"launchTemplateConfigs": [{"overrides": [{"instanceRequirements": {"acceleratorNames": ["l40s"]}}]}]}
    fleet_bad = {"launchTemplateConfigs": [{"overrides": [{"instanceRequirements": {"acceleratorNames": ["t4"]}}]}]}
    resources = [
        Res(c.FLEET, "ok", fleet_ok),
        Res(c.FLEET, "bad", fleet_bad),
        Res(c.NODE_POOL_V1BETA1, "np-bad", nodepool((CAT, "In", ["g"]))),
        Res(c.NODE_POOL, "np-ok", nodepool((c.KEY_GPU_NAME, "In", ["h100"]))),
        Res(c.NODE_POOL, "np-open", nodepool(limits={"nvidia.com/gpu": "8"})),
        Res(c.NODE_POOL, "np-cpu", nodepool((CAT, "In", ["c"]))),
        Res(LC, "lc", {"instanceType": "g5.xlarge"}),
        Res(c.CAPACITY_RESERVATION, "cr", {"instanceType": "p5.48xlarge"}),
    ]
    assert flagged("gpu-family-allowlist", resources, allowed) == {"bad", "np-bad", "np-open", "lc"}
    assert resource_messages("gpu-family-allowlist", resources[1], allowed) == [
        "bad: launchTemplateConfigs[0].overrides[0].instanceRequirements (instanceRequirements) admits family "
        "'g4dn', which is not allowed here (allowed: g6e, p5). Fix: narrow the requirements to allowed families, "
        "or allow it in allowedFamilies."
    ]
    # Category g admits g4ad, g4dn, g5, g5g, g6, g6f, g7 and g7e outside the allowed g6e.
    assert len(resource_messages("gpu-family-allowlist", resources[2], allowed)) == 8


def test_deprecated_min_memory_and_market_read_requirement_sets():
    np = nodepool((CAT, "In", ["p"]), labels={c.WORKLOAD_KEY: "fine-tuning"})
    assert resource_messages("deprecated-accelerators", Res(c.NODE_POOL, "np", np)) == [
        "np: spec.template.spec.requirements (requirements karpenter.k8s.aws/instance-category In ['p']) admits "
        "deprecated V100. Fix: exclude family 'p3'.",
        "np: spec.template.spec.requirements (requirements karpenter.k8s.aws/instance-category In ['p']) admits "
        "deprecated V100-32GB. Fix: exclude family 'p3dn'.",
    ]
    # "fine-tuning" is not a documented kind, so the training minimum applies.
    mem = resource_messages("gpu-min-memory", Res(c.NODE_POOL, "np", np), {"minGpuMemoryGib": 40})
    assert mem == [
        "np: spec.template.spec.requirements (requirements karpenter.k8s.aws/instance-category In ['p']) admits "
        "family 'p3' (V100, 16 GiB per accelerator), below the 40 GiB minimum for fine-tuning pools. Fix: "
        "constrain it to families with more GPU memory.",
        "np: spec.template.spec.requirements (requirements karpenter.k8s.aws/instance-category In ['p']) admits "
        "family 'p3dn' (V100-32GB, 32 GiB per accelerator), below the 40 GiB minimum for fine-tuning pools. Fix: "
        "constrain it to families with more GPU memory.",
    ]
    infer = nodepool((CAT, "In", ["p"]), labels={c.WORKLOAD_KEY: "inference"})
    assert resource_messages("gpu-min-memory", Res(c.NODE_POOL, "np", infer), {"minGpuMemoryGib": 40}) == []
    lc = Res(LC, "lc", {"instanceType": "g5.xlarge", "spotPrice": "1"})
    assert resource_messages("gpu-min-memory", lc) == []
    fleet = Res(
        c.FLEET,
        "f",
        {
            "targetCapacitySpecification": {"defaultTargetCapacityType": "on-demand"},
            "launchTemplateConfigs": [{"overrides": [{"instanceType": "p5e.48xlarge"}]}],
        },
    )
    assert resource_messages("market-eligibility", fleet) == [
        "f: launchTemplateConfigs[0].overrides[0].instanceType 'p5e.48xlarge' is not sold through On-Demand "
        "(available: Spot, Capacity Blocks); the launch would fail. Fix: change the purchase option or type."
    ]
    # A requirement set launches whatever of it the market sells.
    abs_fleet = Res(
        c.FLEET,
        "a",
        {"launchTemplateConfigs": [{"overrides": [{"instanceRequirements": {"acceleratorNames": ["h200"]}}]}]},
    )
    assert resource_messages("market-eligibility", abs_fleet) == []
    only_p5e = Res(
        c.FLEET,
        "b",
        {"launchTemplateConfigs": [{"overrides": [{"instanceRequirements": {"allowedInstanceTypes": ["p5e.*"]}}]}]},
    )
    assert len(resource_messages("market-eligibility", only_p5e)) == 1


def test_count_cap_and_spot_share_cover_every_pool_kind():
    resources = [
        Res(
            c.FLEET,
            "fleet",
            {
                "targetCapacitySpecification": {"totalTargetCapacity": 20.0},
                "launchTemplateConfigs": [{"overrides": [{"instanceType": "p5.48xlarge"}]}],
            },
        ),
        Res(c.SPOT_FLEET, "sfr", {"targetCapacity": 2.0, "launchSpecifications": [{"instanceType": "g6e.xlarge"}]}),
        Res(c.NODE_POOL_V1BETA1, "np", nodepool((c.KEY_FAMILY, "In", ["g6e"]))),
    ]
    assert stack_flagged("gpu-count-cap", resources) == {"fleet", "np"}
    spot = stack_messages("nonprod-spot-share", resources[:2])
    assert spot == [
        (
            "fleet",
            "fleet: only 2 of 162 GPUs at maximum size (1%) can run on spot, below 50% for a non-prod "
            "environment. Fix: move pools (this one has the most on-demand GPUs) to spot (capacityType SPOT, "
            "onDemandPercentageAboveBaseCapacity < 100, or a Karpenter capacity-type requirement including spot).",
        )
    ]


def test_capacity_block_with_placement_group():
    cb = {"instanceMarketOptions": {"marketType": "capacity-block"}, "instanceType": "p5.48xlarge"}
    resources = [
        Res(LT, "cb-pg-lt", {**cb, "placement": {"groupName": "pg"}}),
        Res(ASG, "uses-cb-pg", {"maxSize": 1.0}, deps={"launchTemplate": ["cb-pg-lt"]}),
        Res(LT, "cb-lt", cb),
        Res(ASG, "cb-asg-pg", {"maxSize": 1.0, "placementGroup": "pg"}, deps={"launchTemplate": ["cb-lt"]}),
        Res(ASG, "cb-asg", {"maxSize": 1.0}, deps={"launchTemplate": ["cb-lt"]}),
        Res(LT, "od-pg-lt", {"instanceType": "p5.48xlarge", "placement": {"groupId": "pg-1"}}),
        Res(ASG, "od-asg", {"maxSize": 1.0}, deps={"launchTemplate": ["od-pg-lt"]}),
        Res(LT, "lonely", {**cb, "placement": {"groupId": "pg-1"}}),
        Res(
            NG,
            "ng",
            {"capacityType": "CAPACITY_BLOCK", "instanceTypes": ["p5.48xlarge"]},
            deps={"launchTemplate": ["od-pg-lt"]},
        ),
        Res(c.INSTANCE, "vm", {**cb, "placementGroupId": "pg-2"}),
    ]
    got = dict(stack_messages("capacity-block-no-placement-group", resources))
    assert set(got) == {"uses-cb-pg", "cb-asg-pg", "lonely", "ng", "vm"}
    assert got["ng"] == (
        "ng: buys a Capacity Block and asks for a placement group (launch template od-pg-lt placement.groupId); a "
        "block not created in that group fails with InsufficientInstanceCapacity. Fix: drop the placement group "
        "(set efa.placementGroup false in the gpucloud spec) for Capacity Block pools."
    )
    assert "(placementGroup)" in got["cb-asg-pg"] and "(placementGroupId)" in got["vm"]
    assert "(placement.groupId)" in got["lonely"]


def test_non_interruptible_pools_never_buy_spot():
    mark = {c.INTERRUPTIBLE_KEY: "false"}
    resources = [
        Res(NG, "ng-spot", {"capacityType": "SPOT", "labels": mark}),
        Res(NG, "ng-od", {"labels": mark}),
        Res(NG, "ng-unmarked", {"capacityType": "SPOT"}),
        Res(LT, "marked-lt", {"tags": mark}),
        Res(
            ASG,
            "asg",
            {"mixedInstancesPolicy": {"instancesDistribution": {"onDemandPercentageAboveBaseCapacity": 90.0}}},
            deps={"mixedInstancesPolicy": ["marked-lt"]},
        ),
        Res(LT, "spot-lt", {"tags": mark, "instanceMarketOptions": {"marketType": "spot"}}),
        Res(LC, "lc", {"spotPrice": "1", "tags": mark}),
        Res(c.NODE_POOL, "np-spot", nodepool((c.KEY_CAPACITY_TYPE, "In", ["spot"]), labels=mark)),
        Res(c.NODE_POOL, "np-od", nodepool((c.KEY_CAPACITY_TYPE, "In", ["on-demand"]), labels=mark)),
        Res(c.SPOT_REQUEST, "sir", {"tags": mark}),
    ]
    got = dict(stack_messages("non-interruptible-not-spot", resources))
    assert set(got) == {"ng-spot", "asg", "spot-lt", "lc", "np-spot", "sir"}
    assert got["ng-spot"] == (
        'ng-spot: is marked gpucloud.io/interruptible: "false" but buys spot capacity. Fix: buy it on-demand or '
        "from a reservation (capacityType ON_DEMAND, no spot share, karpenter.sh/capacity-type In [on-demand]), or "
        "drop the gpucloud.io/interruptible mark if the work tolerates interruption."
    )
