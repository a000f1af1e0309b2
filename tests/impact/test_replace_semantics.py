"""The replace-semantics table: provenance for every entry, the extractor of scripts/replace_semantics.py, and (with
GPUCLOUD_PROVIDER_SOURCES pointing at fetched checkouts) the table compared with the providers' sources."""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import json
import os
import re
from pathlib import Path
from types import ModuleType

import pytest

from gpucloud.impact.semantics import TABLE_FILE, semantics_for

ROOT = Path(__file__).resolve().parents[2]
TABLE = json.loads(TABLE_FILE.read_text())


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("replace_semantics", ROOT / "scripts" / "replace_semantics.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()


@pytest.mark.parametrize("type_", sorted(TABLE["types"]))
def test_every_entry_names_its_source(type_: str) -> None:
    entry = TABLE["types"][type_]
    src = entry["source"]
    assert src["repo"] in ("hashicorp/terraform-provider-aws", "pulumi/pulumi-kubernetes")
    assert re.fullmatch(r"[0-9a-f]{40}", src["commit"])
    assert src["path"].endswith(".go") and src["version"]
    assert entry["force_new"] == sorted(set(entry["force_new"]))
    # An empty list is a finding too (nothing replaces), so it must say why.
    assert entry["force_new"] or entry["update_note"]


@pytest.mark.parametrize(
    "type_", sorted(t for t, e in TABLE["types"].items() if e["source"]["repo"] == "hashicorp/terraform-provider-aws")
)
def test_no_terraform_force_new_path_is_a_block_with_force_new_paths_under_it(type_: str) -> None:
    # A path with force-new paths under it is a block; terraform-plugin-sdk gives a block's own ForceNew to its
    # item count only (diffList/diffSet), so it belongs in conditional_force_new, not in force_new.
    entry = TABLE["types"][type_]
    force_new = entry["force_new"]
    blocks = [p for p in force_new if any(q.startswith(p + ".") for q in force_new)]
    assert blocks == []


def test_pinned_versions_say_what_is_not_established() -> None:
    pinned = TABLE["pinned"]
    assert pinned["pulumi_aws"].startswith("7.51.1")
    assert pinned["terraform_provider_aws"].startswith("unknown exactly; at least v6.66.0 for 7.51.1")
    assert pinned["pulumi_aws_overrides"].startswith("not checked")


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(n) for n in release.lstrip("v").split("."))


@pytest.mark.parametrize(
    "evidence", TABLE["pinned"]["terraform_provider_aws_evidence"], ids=lambda e: f"{e['release']}:{e['sdk']}"
)
def test_the_installed_sdk_has_what_each_upstream_release_of_the_lower_bound_added(evidence: dict[str, str]) -> None:
    # The lower bound is a fingerprint: the pinned pulumi_aws SDK carries a resource, function or argument that the
    # named terraform-provider-aws release added, so it bridges that release or a later one.
    assert importlib.metadata.version("pulumi_aws") == TABLE["pinned"]["pulumi_aws"].split()[0]
    module, _, name = evidence["sdk"].rpartition(".")
    found = getattr(importlib.import_module(module), name, None)
    assert found is not None, f"{evidence['sdk']} is not in the installed SDK"
    if "argument" in evidence:
        assert evidence["argument"] in inspect.signature(found.__init__).parameters


def test_the_lower_bound_is_the_newest_release_the_evidence_names() -> None:
    evidence = TABLE["pinned"]["terraform_provider_aws_evidence"]
    newest = max((e["release"] for e in evidence), key=_release_key)
    assert newest == "v6.66.0"
    assert f"at least {newest} for 7.51.1" in TABLE["pinned"]["terraform_provider_aws"]


def test_the_gpu_node_group_is_replaced_by_instance_types_and_rolled_by_versions() -> None:
    sem = semantics_for("aws:eks/nodeGroup:NodeGroup")
    assert sem is not None
    assert sem.forced_by(["instanceTypes[0]", "scalingConfig.desiredSize"]) == ["instanceTypes"]
    assert sem.forced_by(["launchTemplate.version"]) == []
    assert sem.rolls(["launchTemplate.version", "releaseVersion"]) == ["launchTemplate.version", "releaseVersion"]


def test_kubernetes_objects_default_to_name_and_namespace() -> None:
    sem = semantics_for("kubernetes:karpenter.sh/v1:NodePool")
    assert sem is not None and sem.force_new == ("metadata.name", "metadata.namespace")
    assert semantics_for("kubernetes:helm.sh/v3:Release") is None
    assert semantics_for("aws:gamelift/fleet:Fleet") is None


# A schema shaped like terraform-provider-aws resources (written for this test, not taken from the provider).
TF_SCHEMA = """
func resourceThing() *schema.Resource {
	return &schema.Resource{
		Schema: map[string]*schema.Schema{
			"pool_size": {
				Type:     schema.TypeInt,
				ForceNew: true,
			},
			names.AttrClusterName: {
				Type:     schema.TypeString,
				Optional: true,
			},
			"boot_config": {
				Type:     schema.TypeList,
				MaxItems: 1,
				Elem: &schema.Resource{
					Schema: map[string]*schema.Schema{
						names.AttrKMSKeyID: {
							Type:     schema.TypeString,
							ForceNew: true,
						},
						"disk_gib": {
							Type: schema.TypeInt,
						},
					},
				},
			},
			names.AttrTags: tftags.TagsSchema(),
			"zone_name": {
				Type:     schema.TypeString,
				ForceNew: true,
			},
		},
	}
}

func later() { _ = map[string]*schema.Schema{"not_the_resource": {ForceNew: true}} }
"""

# A forceNew table shaped like pulumi-kubernetes' diff.go (written for this test).
K8S_DIFF = """
var forceNew = _groups{
	"apps": _versions{
		"v1": _kinds{
			"Widget": widget,
			"Gadget": properties{".spec.mode"},
		},
	},
	"core": core,
}

var core = _versions{
	"v1": _kinds{
		"Crate": append(
			properties{
				".spec.lid",
			},
			selectorProps(".spec.selector")...),
	},
}

var widget = append(
	properties{
		".spec.selector",
	},
	selectorProps(".spec.selector")...,
)

func metadataForceNewProperties(prefix string) properties {
	return properties{
		prefix + ".name",
		prefix + ".namespace",
	}
}

func selectorProps(prefix string) properties {
	return properties{
		prefix + ".matchLabels",
	}
}
"""


def test_extractor_reads_force_new_attributes_nested_blocks_included() -> None:
    assert SCRIPT.tf_force_new(TF_SCHEMA) == ["bootConfig.kmsKeyId", "poolSize", "zoneName"]
    assert SCRIPT.tf_force_new(TF_SCHEMA, {"KMSKeyID": "key_arn"}) == ["bootConfig.keyArn", "poolSize", "zoneName"]


def test_extractor_reads_a_shared_schema_function_and_splits_constant_names() -> None:
    shared = TF_SCHEMA.replace(
        'Schema: map[string]*schema.Schema{\n\t\t\t"pool_size"',
        'SchemaFunc: func() map[string]*schema.Schema {\n\t\t\treturn map[string]*schema.Schema{\n\t\t\t"pool_size"',
        1,
    )
    assert shared != TF_SCHEMA
    assert SCRIPT.tf_force_new(shared) == ["bootConfig.kmsKeyId", "poolSize", "zoneName"]
    names = ["VPCID", "SubnetIDs", "OutpostARN", "CIDRBlock", "IOPS", "NamePrefix"]
    assert [SCRIPT._split_camel(n) for n in names] == [
        "vpc_id", "subnet_ids", "outpost_arn", "cidr_block", "iops", "name_prefix",
    ]  # fmt: skip


# A schema held in a package-level variable, the way SQS and SNS resources keep theirs (written for this test).
VAR_SCHEMA = """
var (
	widgetSchema = map[string]*schema.Schema{
		names.AttrName: {
			Type:     schema.TypeString,
			ForceNew: true,
		},
		"fifo_widget": {
			Type:     schema.TypeBool,
			ForceNew: true,
		},
		"retention": {
			Type: schema.TypeInt,
		},
		"boot_config": {
			Type: schema.TypeList,
			Elem: &schema.Resource{
				Schema: map[string]*schema.Schema{
					"disk_gib": {
						Type:     schema.TypeInt,
						ForceNew: true,
					},
				},
			},
		},
	}

	widgetAttributeMap = attrmap.New(map[string]string{"retention": "Retention"}, widgetSchema)
)

func helperBlock() *schema.Resource {
	return &schema.Resource{
		Schema: map[string]*schema.Schema{"not_the_resource": {ForceNew: true}},
	}
}

func resourceWidget() *schema.Resource {
	return &schema.Resource{
		CreateWithoutTimeout: resourceWidgetCreate,

		Schema: widgetSchema,
	}
}
"""


def test_extractor_reads_a_schema_held_in_a_package_level_variable() -> None:
    # The helper's nested `Schema:` before the constructor is not the resource's.
    assert SCRIPT.tf_force_new(VAR_SCHEMA) == ["bootConfig.diskGib", "fifoWidget", "name"]


def test_extractor_reads_a_schema_returned_by_a_named_function() -> None:
    as_var = "var (\n\twidgetSchema = map[string]*schema.Schema{"
    as_func = "func widgetSchema() map[string]*schema.Schema {\n\treturn map[string]*schema.Schema{"
    go = VAR_SCHEMA.replace(as_var, as_func, 1)
    go = go.replace("Schema: widgetSchema,", "SchemaFunc: widgetSchema,")
    assert go.count("func widgetSchema()") == 1 and "SchemaFunc: widgetSchema," in go
    assert SCRIPT.tf_force_new(go) == ["bootConfig.diskGib", "fifoWidget", "name"]
    with pytest.raises(ValueError, match="schema variable"):
        SCRIPT.tf_force_new(VAR_SCHEMA.replace("Schema: widgetSchema,", "Schema: missingSchema,"))


# Block-level ForceNew next to a ForceNew list of strings (written for this test).
BLOCK_SCHEMA = """
func resourceGadget() *schema.Resource {
	return &schema.Resource{
		Schema: map[string]*schema.Schema{
			"provider_config": {
				Type:     schema.TypeList,
				MaxItems: 1,
				Optional: true,
				ForceNew: true,
				Elem: &schema.Resource{
					Schema: map[string]*schema.Schema{
						"group_arn": {
							Type:     schema.TypeString,
							Required: true,
							ForceNew: true,
						},
						"scaling": {
							Type:     schema.TypeInt,
							Optional: true,
						},
					},
				},
			},
			"zones": {
				Type:     schema.TypeSet,
				Optional: true,
				ForceNew: true,
				Elem:     &schema.Schema{Type: schema.TypeString},
			},
		},
	}
}
"""


def test_a_blocks_own_force_new_is_a_conditional_replace_not_a_force_new_path() -> None:
    # The SDK applies a block's ForceNew to its item count only; a list of strings' ForceNew to every element.
    assert SCRIPT.tf_force_new(BLOCK_SCHEMA) == ["providerConfig.groupArn", "zones"]
    assert SCRIPT.tf_force_new_blocks(BLOCK_SCHEMA) == ["providerConfig"]
    assert SCRIPT.tf_force_new_blocks(TF_SCHEMA) == []


def test_check_wants_each_force_new_block_quoted_as_conditional(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "hashicorp" / "terraform-provider-aws"
    (repo / "internal" / "service" / "gadget").mkdir(parents=True)
    (repo / "internal" / "service" / "gadget" / "gadget.go").write_text(BLOCK_SCHEMA)
    src = {"repo": "hashicorp/terraform-provider-aws", "path": "internal/service/gadget/gadget.go"}
    entry = {"force_new": ["providerConfig.groupArn", "zones"], "source": src}
    table = tmp_path / "table.json"
    monkeypatch.setattr(SCRIPT, "TABLE", table)
    table.write_text(json.dumps({"types": {"aws:gadget/gadget:Gadget": entry}}))
    assert SCRIPT.main(["--check", str(tmp_path)]) == 1
    quoted = {**entry, "conditional_force_new": {"providerConfig": "replaced when the block is added or removed"}}
    table.write_text(json.dumps({"types": {"aws:gadget/gadget:Gadget": quoted}}))
    assert SCRIPT.main(["--check", str(tmp_path)]) == 0


# names/attr_consts_gen.go shaped like the provider's (written for this test; the values are made up so that they
# differ from what splitting the constant's name would give).
ATTR_CONSTS = """
package names

const (
	AttrName        = "label"
	AttrClusterName = "cluster"
)
"""


def test_names_constants_are_read_from_the_checkouts_names_package(tmp_path: Path) -> None:
    (tmp_path / "names").mkdir()
    (tmp_path / "names" / "attr_consts_gen.go").write_text(ATTR_CONSTS)
    names = SCRIPT.attr_names(tmp_path)
    assert names == {"Name": "label", "ClusterName": "cluster"}
    assert SCRIPT.tf_force_new(VAR_SCHEMA, names) == ["bootConfig.diskGib", "fifoWidget", "label"]
    assert SCRIPT.tf_requires_replace(FW_SCHEMA, names) == ["bootConfig.diskSize", "cluster"]
    # Without the names package the constant's CamelCase is split.
    assert SCRIPT.attr_names(tmp_path / "absent") == {}
    assert SCRIPT.tf_requires_replace(FW_SCHEMA, {}) == ["bootConfig.diskSize", "clusterName"]


def test_check_compares_each_entry_with_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "hashicorp" / "terraform-provider-aws"
    (repo / "internal" / "service" / "widget").mkdir(parents=True)
    (repo / "internal" / "service" / "widget" / "widget.go").write_text(VAR_SCHEMA)
    (repo / "names").mkdir()
    (repo / "names" / "attr_consts_gen.go").write_text(ATTR_CONSTS)
    src = {"repo": "hashicorp/terraform-provider-aws", "path": "internal/service/widget/widget.go"}
    entry = {"force_new": ["bootConfigs.diskGib", "fifoWidget", "label"], "renames": {"bootConfig": "bootConfigs"}}
    table = tmp_path / "table.json"
    table.write_text(json.dumps({"types": {"aws:widget/widget:Widget": {**entry, "source": src}}}))
    monkeypatch.setattr(SCRIPT, "TABLE", table)
    assert SCRIPT.main(["--check", str(tmp_path)]) == 0
    stale = {**entry, "force_new": ["label"], "source": src}
    table.write_text(json.dumps({"types": {"aws:widget/widget:Widget": stale}}))
    assert SCRIPT.main(["--check", str(tmp_path)]) == 1
    assert SCRIPT.main(["--check", str(tmp_path / "empty")]) == 1


# A Plugin Framework schema shaped like terraform-provider-aws' (written for this test).
FW_SCHEMA = """
func (r *widgetResource) Schema(ctx context.Context, req resource.SchemaRequest, response *resource.SchemaResponse) {
	response.Schema = schema.Schema{
		Attributes: map[string]schema.Attribute{
			names.AttrClusterName: schema.StringAttribute{
				Required: true,
				PlanModifiers: []planmodifier.String{
					stringplanmodifier.RequiresReplace(),
				},
			},
			"role_arn": schema.StringAttribute{
				Required: true,
			},
			"zone": schema.StringAttribute{
				Optional: true,
				PlanModifiers: []planmodifier.String{
					stringplanmodifier.RequiresReplaceIf(zoneChanged, "", ""),
				},
			},
			names.AttrTags: tftags.TagsAttribute(),
		},
		Blocks: map[string]schema.Block{
			"boot_config": schema.ListNestedBlock{
				NestedObject: schema.NestedBlockObject{
					Attributes: map[string]schema.Attribute{
						"disk_size": schema.Int64Attribute{
							Optional: true,
							PlanModifiers: []planmodifier.Int64{
								int64planmodifier.RequiresReplaceIfConfigured(),
							},
						},
						"label": schema.StringAttribute{
							Optional: true,
						},
					},
				},
			},
		},
	}
}

func (r *widgetResource) ModifyPlan() { response.RequiresReplace = path.Paths{path.Root("role_arn")} }
"""


def test_extractor_reads_plugin_framework_requires_replace_plan_modifiers() -> None:
    # Conditional RequiresReplaceIf (zone) and ModifyPlan replaces (role_arn) are left to conditional_force_new.
    assert SCRIPT.tf_requires_replace(FW_SCHEMA) == ["bootConfig.diskSize", "clusterName"]
    with pytest.raises(ValueError, match="Attributes"):
        SCRIPT.tf_requires_replace(TF_SCHEMA)


def test_renames_give_list_blocks_their_plural_pulumi_names() -> None:
    paths = ["initialLifecycleHook", "initialLifecycleHook.name", "name"]
    renames = {"initialLifecycleHook": "initialLifecycleHooks"}
    assert SCRIPT.rename(paths, renames) == ["initialLifecycleHooks", "initialLifecycleHooks.name", "name"]


def test_extractor_reads_the_kubernetes_force_new_table() -> None:
    meta = ["metadata.name", "metadata.namespace"]
    assert SCRIPT.k8s_force_new(K8S_DIFF, "Widget", "apps", "v1") == [
        *meta,
        "spec.selector",
        "spec.selector.matchLabels",
    ]
    assert SCRIPT.k8s_force_new(K8S_DIFF, "Gadget", "apps", "v1") == [*meta, "spec.mode"]
    assert SCRIPT.k8s_force_new(K8S_DIFF, "Crate", "", "v1") == [*meta, "spec.lid", "spec.selector.matchLabels"]
    assert SCRIPT.k8s_force_new(K8S_DIFF, "Other", "apps", "v1") == meta


@pytest.mark.skipif(
    not os.environ.get("GPUCLOUD_PROVIDER_SOURCES"),
    reason="set GPUCLOUD_PROVIDER_SOURCES to a directory of fetched checkouts (<owner>/<repo>/) at the pinned tags",
)
def test_table_matches_the_provider_sources() -> None:
    sources = Path(os.environ["GPUCLOUD_PROVIDER_SOURCES"])
    for type_, entry in TABLE["types"].items():
        derived = SCRIPT.derive(type_, entry, sources)
        assert derived is not None, f"{type_}: {entry['source']['path']} is not under {sources}"
        assert derived == entry["force_new"], type_
