"""Shared semantic readers: each guarded question (who can reach it, who is trusted, is it a secret, where are
the pods) answered once, here, and used by every guardrail that asks it (issue 25 item 3).

- ``reach``: unions of IPv4/IPv6 CIDRs and prefix lists measured against the public address space;
- ``principals``: resource and trust policy documents: public principals, conditions that really restrict;
- ``secrets``: secret detection that decodes (base64, gzip, MIME multi-part, cloud-init) and knows token formats;
- ``keys``: KMS key references (an AWS-managed alias is not a customer-managed key);
- ``paths``: the values at a surface-inventory property path (nested blocks and lists walked), for the
  guardrails whose reads derive from the inventory;
- ``templates``: IAM policy documents inside CloudFormation templates and Cloud Control desired states;
- ``rbac``: Kubernetes RBAC rules and bindings (wildcard rules, anonymous subjects).

Pod specs are found by ``gpucloud_policies.k8s`` (the Kubernetes object model lives there).
"""
