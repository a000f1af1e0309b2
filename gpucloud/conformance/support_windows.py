"""`support.window`: every release runs inside its project's published Kubernetes support window.

A chart's `kubeVersion` (upgrade.chart-kube-version) is what Helm enforces; it is often far wider than what the
project tests (KEDA 2.17's chart accepts >= 1.23, while KEDA lists 2.17 as tested on 1.30 - 1.32 only). This check
reads the windows the projects publish (gpucloud/versions/support.json, each with its source) and warns where the
stack's minor is outside the window of the release's app version. A warning, not an error: outside the tested
window the add-on may well work, nobody upstream has said so. A chart whose project publishes a matrix but not for
this release is undecided (warning with the reason); a chart without a published matrix is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpucloud.charts import lock as charts_lock
from gpucloud.conformance import ConformanceContext, Finding, register_check
from gpucloud.plan.model import is_unknown
from gpucloud.versions import support

CHECK = "support.window"
RELEASE = "kubernetes:helm.sh/v3:Release"


def _image_tag(values: Any) -> str | None:
    image = values.get("image") if isinstance(values, dict) else None
    tag = image.get("tag") if isinstance(image, dict) else None
    return tag.split("@", 1)[0] if isinstance(tag, str) and not is_unknown(tag) else None


@register_check(CHECK)
def check_support_windows(ctx: ConformanceContext) -> Iterator[Finding]:
    minor = ctx.kubernetes_version
    for r in ctx.plan.of_type(RELEASE):
        chart, version = r.inputs.get("chart"), r.inputs.get("version")
        if not isinstance(chart, str) or not isinstance(version, str) or is_unknown(chart) or is_unknown(version):
            continue
        name = chart.rstrip("/").rsplit("/", 1)[-1]
        known = support.load().get(name)
        if known is None:
            continue
        try:
            app = charts_lock.pin(name, version).app_version
        except charts_lock.LockError:
            continue  # helm.lock reports a chart the lock does not pin
        if known.same_minor:
            tag = _image_tag(r.inputs.get("values")) or app
            if support.app_minor(tag) != minor:
                yield Finding(
                    CHECK,
                    "warning",
                    r.urn,
                    "values.image.tag",
                    f"{name} {tag} is meant for Kubernetes {support.app_minor(tag)}; this stack runs {minor}",
                    f"a {name} release of minor {minor}",
                    known.source,
                )
            continue
        window = support.window(name, app)
        if window is None:
            yield Finding(
                CHECK,
                "warning",
                r.urn,
                "version",
                f"undecided: {name}@{version} (app {app}) has no published support window recorded "
                "(gpucloud/versions/support.json lists " + ", ".join(w.app for w in known.windows) + ")",
                f"the window {name} publishes for app {support.app_minor(app)}",
                known.source,
            )
        elif not window.covers(minor):
            yield Finding(
                CHECK,
                "warning",
                r.urn,
                "version",
                f"{name}@{version} (app {app}) is published as supporting Kubernetes {window.shown}; this stack "
                f"runs {minor}",
                f"a {name} release whose published window includes {minor}",
                window.source,
            )


__all__ = ["CHECK", "check_support_windows"]
