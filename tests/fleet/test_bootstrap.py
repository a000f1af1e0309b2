"""gpucloud.fleet.bootstrap: labels, taints and whether the user data joins the cluster, per user-data form
(plain shell, MIME multi-part, nodeadm NodeConfig, Bottlerocket TOML), edge by edge."""

from __future__ import annotations

import base64

from gpucloud.fleet.bootstrap import Bootstrap, parse_user_data
from gpucloud.fleet.model import Taint
from gpucloud.fleet.values import UNKNOWN


def mime(*parts: tuple[str, str], header: bool = True, b64: bool = False) -> str:
    out = "MIME-Version: 1.0\n" if header else ""
    out += 'Content-Type: multipart/mixed; boundary="B"\n\n'
    for ctype, body in parts:
        enc = "Content-Transfer-Encoding: base64\n" if b64 else ""
        payload = base64.b64encode(body.encode()).decode() if b64 else body
        out += f"--B\nContent-Type: {ctype}\n{enc}\n{payload}\n"
    return out + "--B--\n"


NODECONFIG = (
    'apiVersion: node.eks.aws/v1alpha1\nkind: "NodeConfig"\nspec:\n  kubelet:\n    flags: ["--node-labels=a=1"]\n'
)


def test_absent_and_unknown_user_data() -> None:
    assert parse_user_data(None) == Bootstrap({}, [], True, False)
    assert parse_user_data(UNKNOWN) == Bootstrap({}, [], False, True)


def test_plain_shell_flags() -> None:
    boot = parse_user_data(
        "/etc/eks/bootstrap.sh c --kubelet-extra-args '--node-labels=a=b=c,d=e --register-with-taints=k=x:y:NoExecute'"
    )
    assert boot == Bootstrap({"a": "b=c", "d": "e"}, [Taint("k", "x:y", "NoExecute")], True, True)
    # A word that only contains flags after other text is not a kubelet flag; a flag without value is skipped.
    boot = parse_user_data("echo 'run --node-labels=z=1' --node-labels")
    assert boot == Bootstrap({}, [], True, False)
    assert parse_user_data("nodeadm init").full is True
    # Unbalanced quotes: the words are split on whitespace instead.
    boot = parse_user_data("x --node-labels g=h '")
    assert boot.labels == {"g": "h"}


def test_mime_forms() -> None:
    # NodeConfig recognised by its part's content type even when the body does not spell kind: NodeConfig.
    boot = parse_user_data("  " + mime(("application/node.eks.aws", NODECONFIG)))
    assert boot.labels == {"a": "1"} and boot.full is False
    assert parse_user_data(mime(("application/node.eks.aws", NODECONFIG), header=False)).labels == {"a": "1"}
    assert parse_user_data(mime(("application/node.eks.aws", NODECONFIG), b64=True)).labels == {"a": "1"}
    shell = mime(("text/x-shellscript", "#!/bin/sh\n/etc/eks/bootstrap.sh c --kubelet-extra-args --node-labels=s=t"))
    assert parse_user_data(base64.b64encode(shell.encode()).decode()) == Bootstrap({"s": "t"}, [], True, True)


def test_nodeconfig_documents() -> None:
    docs = (
        "--- just a string\n"
        "---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster: {name: c}\n"
        "---\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      registerWithTaints:\n"
        "        - {key: gpu, value: 'yes', effect: NoSchedule}\n        - {}\n"
    )
    boot = parse_user_data(docs)
    assert boot == Bootstrap({}, [Taint("gpu", "yes", "NoSchedule"), Taint("", "", "")], True, True)
    assert parse_user_data("kind: NodeConfig\nspec: {kubelet: {}}\n").full is False
    assert parse_user_data("kind: NodeConfig\nspec: [unclosed\n") == Bootstrap({}, [], True, False)


def test_bottlerocket_settings() -> None:
    toml = (
        "[settings.kubernetes]\napi-server = 'https://x'\n"
        "[settings.kubernetes.node-labels]\nrole = 'gpu'\n"
        "[settings.kubernetes.node-taints]\n"
        "'nvidia.com/gpu' = ['a:b:NoSchedule']\nsingle = 'v:NoExecute'\n"
    )
    boot = parse_user_data(toml)
    assert boot == Bootstrap(
        {"role": "gpu"},
        [Taint("nvidia.com/gpu", "a:b", "NoSchedule"), Taint("single", "v", "NoExecute")],
        True,
        True,
        True,
    )
    assert parse_user_data("[settings.kubernetes\nbroken") == Bootstrap({}, [], True, False, True)
    assert parse_user_data("[settings.kubernetes]\n").full is False
