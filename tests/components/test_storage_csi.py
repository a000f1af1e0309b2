"""FsxCsi under mocks: the EKS add-on and its scoped role, the static PV/PVC bound to the file system, and the
optional scratch StorageClass."""

from __future__ import annotations

import json
from typing import Any

import pytest
from storage_testkit import ACCOUNT, FS, REGION, TAGS, doc, handle, names, provider, run

from gpucloud.components.storage import FsxCsi, FsxCsiConfig, LustreConfig, LustreStorage
from gpucloud.components.storage.csi import driver_policy
from gpucloud.plan import Plan, is_unknown
from gpucloud.spec.storage import CsiSpec, FsxSpec

N = "csi"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
SC = "kubernetes:storage.k8s.io/v1:StorageClass"
NS = "kubernetes:core/v1:Namespace"
ADDON = "aws:eks/addon:Addon"


def plan_of(
    csi: dict[str, Any] | None = None,
    *,
    pod_identity: bool = True,
    with_fs: bool = True,
    with_provider: bool = True,
    preview: bool = False,
) -> Plan:
    spec = CsiSpec.model_validate(csi or {})
    config = FsxCsiConfig(
        region=REGION, tags=TAGS, name_prefix="gpucloud-test", csi=spec, use_pod_identity=pod_identity
    )
    fsx = FsxSpec.model_validate({"deploymentType": "SCRATCH_2", "storageCapacityGib": 2400})

    def program() -> None:
        cluster = handle(provider() if with_provider else None)
        fs = None
        if with_fs:
            fs_config = LustreConfig(
                region=REGION, tags=TAGS, name_prefix="gpucloud-test", fsx=fsx, availability_zone="us-east-1b"
            )
            fs = LustreStorage("lustre", fs_config, cluster)
        FsxCsi(N, config, cluster, file_system=fs)

    return run(program, preview=preview)


@pytest.fixture(scope="module")
def default_plan() -> Plan:
    return plan_of()


def test_resources_created(default_plan: Plan) -> None:
    mine = {(r.type, r.name) for r in default_plan if r.custom and r.name.startswith(f"{N}-")}
    assert mine == {
        ("aws:iam/role:Role", f"{N}-driver"),
        ("aws:iam/rolePolicy:RolePolicy", f"{N}-driver-fsx"),
        (ADDON, f"{N}-addon"),
        (NS, f"{N}-namespace"),
        (PV, f"{N}-pv"),
        (PVC, f"{N}-pvc"),
    }
    k8s_provider = default_plan.find("pulumi:providers:kubernetes", "k8s")
    for r in default_plan.of_type(NS, PV, PVC):
        assert r.provider is not None and r.provider.startswith(k8s_provider.urn)


def test_addon_with_pod_identity(default_plan: Plan) -> None:
    addon = default_plan.find(ADDON, f"{N}-addon").inputs
    assert addon["addonName"] == "aws-fsx-csi-driver"
    assert addon["clusterName"] == "gpucloud-test"
    assert "addonVersion" not in addon
    assert "serviceAccountRoleArn" not in addon
    assert [a["serviceAccount"] for a in addon["podIdentityAssociations"]] == ["fsx-csi-controller-sa"]
    trust = doc(default_plan.find("aws:iam/role:Role", f"{N}-driver"), "assumeRolePolicy")
    assert trust["Statement"][0]["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert trust["Statement"][0]["Action"] == ["sts:AssumeRole", "sts:TagSession"]


def test_addon_with_irsa_and_pinned_version() -> None:
    plan = plan_of({"addonVersion": "v1.6.0-eksbuild.1"}, pod_identity=False, preview=True)
    addon = plan.find(ADDON, f"{N}-addon")
    assert addon.inputs["addonVersion"] == "v1.6.0-eksbuild.1"
    assert "podIdentityAssociations" not in addon.inputs
    role = plan.find("aws:iam/role:Role", f"{N}-driver")
    assert role.urn in addon.property_dependencies["serviceAccountRoleArn"]
    trust = doc(role, "assumeRolePolicy")
    issuer = "oidc.eks.us-east-1.amazonaws.com/id/ABCDEF0123456789"
    assert trust["Statement"][0]["Condition"]["StringEquals"] == {
        f"{issuer}:sub": "system:serviceaccount:kube-system:fsx-csi-controller-sa",
        f"{issuer}:aud": "sts.amazonaws.com",
    }


def test_driver_policy_static_only(default_plan: Plan) -> None:
    policy = doc(default_plan.find("aws:iam/rolePolicy:RolePolicy", f"{N}-driver-fsx"))
    assert policy["Statement"] == [
        {
            "Sid": "DescribeFileSystems",
            "Effect": "Allow",
            "Action": ["fsx:DescribeFileSystems"],
            "Resource": "*",  # the action takes no resource-level scope
        }
    ]


def test_driver_policy_for_dynamic_volumes_is_still_scoped() -> None:
    policy = json.loads(driver_policy("aws", ACCOUNT, REGION, dynamic=True))
    sids = [s["Sid"] for s in policy["Statement"]]
    assert sids == ["DescribeFileSystems", "ManageScratchFileSystems", "FsxServiceLinkedRole", "FsxS3ServiceLinkedRole"]
    # Only DescribeFileSystems (which takes no resource-level scope) is on "*"; every write is scoped.
    assert [s["Sid"] for s in policy["Statement"] if s["Resource"] == "*"] == ["DescribeFileSystems"]
    for s in policy["Statement"]:
        assert not any(a.endswith(":*") for a in s["Action"])
    assert policy["Statement"][1]["Action"] == [
        "fsx:CreateFileSystem",
        "fsx:DeleteFileSystem",
        "fsx:TagResource",
        "fsx:UpdateFileSystem",
    ]


def test_static_volume_fields(default_plan: Plan) -> None:
    pv = default_plan.find(PV, f"{N}-pv").inputs
    spec = pv["spec"]
    assert pv["metadata"]["name"] == "training-fsx-lustre"
    assert spec["csi"]["driver"] == "fsx.csi.aws.com"
    assert set(spec["csi"]["volumeAttributes"]) == {"dnsname", "mountname"}
    assert spec["mountOptions"] == ["flock"]
    assert spec["accessModes"] == ["ReadWriteMany"]
    assert spec["persistentVolumeReclaimPolicy"] == "Retain"
    assert spec["storageClassName"] == ""
    assert spec["capacity"] == {"storage": "2400Gi"}
    assert spec["claimRef"] == {"namespace": "training", "name": "fsx-lustre"}
    pvc = default_plan.find(PVC, f"{N}-pvc").inputs
    assert pvc["metadata"] == {"name": "fsx-lustre", "namespace": "training"}
    assert pvc["spec"] == {
        "accessModes": ["ReadWriteMany"],
        "storageClassName": "",
        "volumeName": "training-fsx-lustre",
        "resources": {"requests": {"storage": "2400Gi"}},
    }
    assert default_plan.find(NS, f"{N}-namespace").inputs["metadata"] == {"name": "training"}


def test_volume_handle_and_attributes_come_from_the_file_system() -> None:
    plan = plan_of(preview=True)
    pv = plan.find(PV, f"{N}-pv")
    fs = plan.find(FS, "lustre-fs")
    csi = pv.inputs["spec"]["csi"]
    assert is_unknown(csi["volumeHandle"])
    assert is_unknown(csi["volumeAttributes"]["dnsname"])
    assert is_unknown(csi["volumeAttributes"]["mountname"])
    assert fs.urn in pv.property_dependencies["spec"]
    addon = plan.find(ADDON, f"{N}-addon")
    assert addon.urn in pv.dependencies


def test_names_follow_the_spec() -> None:
    plan = plan_of({"namespace": "research", "claimName": "shared-data", "createNamespace": False})
    assert names(plan, NS) == set()
    pvc = plan.find(PVC, f"{N}-pvc").inputs
    assert pvc["metadata"] == {"name": "shared-data", "namespace": "research"}
    assert plan.find(PV, f"{N}-pv").inputs["spec"]["claimRef"] == {"namespace": "research", "name": "shared-data"}


def test_storage_class_toggle(default_plan: Plan) -> None:
    assert names(default_plan, SC) == set()
    plan = plan_of({"createStorageClass": True, "storageClassName": "scratch"})
    sc = plan.find(SC, f"{N}-scratch-class")
    lustre_sg = plan.find("aws:ec2/securityGroup:SecurityGroup", "lustre-sg")
    assert sc.inputs["metadata"] == {"name": "scratch"}
    assert sc.inputs["provisioner"] == "fsx.csi.aws.com"
    assert sc.inputs["reclaimPolicy"] == "Delete"
    assert sc.inputs["mountOptions"] == ["flock"]
    params = sc.inputs["parameters"]
    assert {k: params[k] for k in ("subnetId", "deploymentType", "dataCompressionType")} == {
        "subnetId": "subnet-bbbb",
        "deploymentType": "SCRATCH_2",
        "dataCompressionType": "LZ4",
    }
    assert lustre_sg.urn in sc.property_dependencies["parameters"]
    statements = doc(plan.find("aws:iam/rolePolicy:RolePolicy", f"{N}-driver-fsx"))["Statement"]
    assert [s["Sid"] for s in statements][1] == "ManageScratchFileSystems"


def test_volume_toggle_off() -> None:
    plan = plan_of({"createVolume": False})
    assert names(plan, PV) | names(plan, PVC) | names(plan, NS) == set()
    assert names(plan, ADDON) == {f"{N}-addon"}


def test_addon_toggle_off() -> None:
    plan = plan_of({"createAddon": False})
    assert names(plan, ADDON) == set()
    assert names(plan, "aws:iam/role:Role") == set()
    assert names(plan, PV) == {f"{N}-pv"}


def test_addon_only_without_a_file_system() -> None:
    plan = plan_of(with_fs=False)
    assert {r.type for r in plan if r.custom} == {
        "pulumi:providers:kubernetes",
        "aws:iam/role:Role",
        "aws:iam/rolePolicy:RolePolicy",
        ADDON,
    }


def test_kubernetes_objects_need_the_cluster_provider() -> None:
    with pytest.raises(Exception, match=r"need cluster\.k8s_provider"):
        plan_of(with_provider=False)
