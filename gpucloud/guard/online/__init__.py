"""The policy pack on the Pulumi CLI's path: started as the CLI starts it, asked over the Analyzer gRPC protocol.

What each step mirrors (Pulumi v3.260 sources; the installed SDK is 3.272):

- Launch (pkg/resource/plugin/analyzer_plugin.go NewPolicyAnalyzer, plugin.go newPlugin, and the Python language
  host's RunPlugin in sdk/python/cmd/pulumi-language-python/main.go): the interpreter of the virtualenv named by
  PulumiPolicy.yaml's ``runtime.options.virtualenv`` (relative to the pack; a policy pack gets no default venv),
  run as ``python -u -m pulumi.policy <engine address> <pack dir>`` in the pack directory, with the virtualenv
  activated (sdk/python/toolchain ActivateVirtualEnv), then PULUMI_ORGANIZATION/PROJECT/STACK/DRY_RUN/CONFIG, then
  the CLI's own environment (later entries win, as in Go's os/exec). The first stdout line is the port
  (plugin.go parsePort); the client dials 127.0.0.1:<port>, calls Handshake and ConfigureStack (both optional:
  UNIMPLEMENTED is fine), then GetAnalyzerInfo, GetPluginInfo and Configure.
- Config (pkg/resource/analyzer/config.go): the --policy-pack-config file is parsed like parsePolicyPackConfig and
  reconciled like ReconcilePolicyPackConfig (schema defaults, the pack's initial config, the file; "all" first),
  each policy's properties validated against ``{"type": "object", "properties": ..., "required": ...}``.
- Resources (pkg/resource/deploy/step_generator.go): Remediate then Analyze per resource on its checked inputs,
  each remediation replacing the inputs; AnalyzeStack once on every resource's preview outputs, with parent,
  dependencies and property dependencies. Properties are marshalled as MarshalProperties does with KeepUnknowns
  and KeepSecrets (sdk/go/common/resource/plugin/rpc.go): an unknown as the unknown-string sentinel, a secret as
  ``{sig: secret, value: v}``, top-level ``__`` keys skipped except for Remediate. Custom resources carry their
  provider (the default provider ``pulumi:providers:<pkg>::default_<version>`` built from the stack config, as
  default_providers.go does, when the program named none); the root stack and the default providers are resources
  of the stack too.

The process stops by itself: it dies with the process that started it (PR_SET_PDEATHSIG through setpriv on
Linux), is killed when the server object closes, and a watchdog kills it after ``lifetime`` seconds whatever
happens. Every RPC has a deadline, so a hung pack fails a caller within a bounded time.

One module per step: launch.py, config.py, marshal.py (resources), preview.py, sharing common.py.
"""

from __future__ import annotations

from gpucloud.guard.online.common import (
    CANT_RUN,
    ENGINE_ADDRESS,
    LEVELS,
    PACK_DIR,
    SECRET_SIG,
    SIG_KEY,
    STACK_TYPE,
    OnlineError,
)
from gpucloud.guard.online.config import (
    PolicyConfig,
    PolicyInfo,
    initial_config,
    parse_config_file,
    policy_infos,
    reconcile_config,
)
from gpucloud.guard.online.launch import Launch, PackServer, _activate, launch_spec, pack_virtualenv, parse_port
from gpucloud.guard.online.marshal import (
    EngineResource,
    Secret,
    computed_outputs,
    default_provider,
    engine_inputs,
    engine_resources,
    marshal_properties,
    marshal_value,
    plain,
    preview_outputs,
    stack_urn,
    unmarshal_properties,
)
from gpucloud.guard.online.preview import OnlineResult, keys, preview, serve

__all__ = [
    "CANT_RUN",
    "ENGINE_ADDRESS",
    "LEVELS",
    "PACK_DIR",
    "SECRET_SIG",
    "SIG_KEY",
    "STACK_TYPE",
    "EngineResource",
    "Launch",
    "OnlineError",
    "OnlineResult",
    "PackServer",
    "PolicyConfig",
    "PolicyInfo",
    "Secret",
    "_activate",
    "computed_outputs",
    "default_provider",
    "engine_inputs",
    "engine_resources",
    "initial_config",
    "keys",
    "launch_spec",
    "marshal_properties",
    "marshal_value",
    "pack_virtualenv",
    "parse_config_file",
    "parse_port",
    "plain",
    "policy_infos",
    "preview",
    "preview_outputs",
    "reconcile_config",
    "serve",
    "stack_urn",
    "unmarshal_properties",
]
