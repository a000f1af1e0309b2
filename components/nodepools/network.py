"""EFA network interface layout for a launch template, counted from the catalog."""

from __future__ import annotations

from gpucloud.catalog import InstanceSpec


def efa_layout(spec: InstanceSpec, efa_only: bool = True) -> list[dict[str, object]]:
    """One interface per EFA interface the type supports (`efa_interfaces`, EC2's MaximumEfaInterfaces).

    Card i carries interface i: device index 0 on card 0, 1 on the others. Card 0 is `efa` (ENA + EFA, the
    node's IP); the rest are `efa-only` (no IP, saves subnet space) where the type supports it, else `efa`.
    Types with more network cards than EFA interfaces (p6-b300: card 0 is ENA-only) get a plain ENA primary
    on card 0 and EFA on cards 1..N. `efa_only=False` makes every EFA interface `efa` (older VPC CNI).
    """
    count = spec.efa_interfaces
    if count == 0:
        return []
    layout: list[dict[str, object]] = []
    if spec.network_cards > count:
        layout.append({"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"})
        cards = range(1, count + 1)
    else:
        cards = range(count)
    for card in cards:
        primary = not layout and card == 0
        kind = "efa" if primary or not (efa_only and spec.efa_only_supported) else "efa-only"
        layout.append({"networkCardIndex": card, "deviceIndex": 0 if primary else 1, "interfaceType": kind})
    return layout


def karpenter_layout(spec: InstanceSpec) -> list[dict[str, object]]:
    """EC2NodeClass `networkInterfaces`: Karpenter takes `interface` and `efa-only` only.

    ENA primary on card 0 / device 0; efa-only on card 0 / device 1 and on every other EFA card at device 0
    (current AWS guidance for multi-card types). Types without efa-only support return [] and rely on
    Karpenter attaching EFA when pods request `vpc.amazonaws.com/efa`.
    """
    if spec.efa_interfaces == 0 or not spec.efa_only_supported:
        return []
    layout: list[dict[str, object]] = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]
    first = 1 if spec.network_cards > spec.efa_interfaces else 0
    for card in range(first, first + spec.efa_interfaces):
        layout.append({"networkCardIndex": card, "deviceIndex": 1 if card == 0 else 0, "interfaceType": "efa-only"})
    return layout
