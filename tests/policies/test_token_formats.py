"""Token formats of the secret reader (readers/secrets.py ``TOKENS``) against gitleaks' own sample vectors.

Provenance: gitleaks v8.30.1 (commit 83d9cd684c87d95d656c1458ef04895a7f1cbd8e, MIT licence),
cmd/generate/config/rules/<vendor>.go, the ``tps`` (true positives) and ``fps`` (false positives) each rule is
validated with: aws.go, privatekey.go, github.go, gitlab.go, slack.go, stripe.go, gcp.go, npm.go, pypi.go,
huggingface.go, sendgrid.go, openai.go, anthropic.go, databricks.go, pulumi.go. Literal samples are copied as
gitleaks writes them (they are fake or long-revoked tokens gitleaks publishes as test data). Where gitleaks
generates a sample at random (``secrets.NewSecret(utils.AlphaNumeric("36"))``), the sample here is a fixed string
of that alphabet and length, said so beside it. The contexts (``{i}Token = "{s}"``, YAML, JSON with an escaped
newline) are gitleaks' ``utils.GenerateSampleSecrets`` templates.
"""

from __future__ import annotations

import pytest

from gpucloud.policies.gpucloud_policies.readers import secrets

AN36 = "Zq8xK2mN4pR7sT1vW3yB5dF6hJ9kL0cA2eG4"  # the shape of NewSecret(AlphaNumeric("36"))
AN20 = "x7Kq2NmP9rT4vW1yZ3bC"  # NewSecret(AlphaNumeric("20"))
HEX40 = "f0eb1acf0da84c06a50c5b2c59932001997786b1"  # NewSecret(Hex("40"))
OPENSSH_BODY = (
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDm9c1Xb0s1oPQ7W0k8h1jZl3Jx6fJ2Yc7X8vP0kq1rVAAAAJi2m4W1tpuF\n"
)


def rules_matching(text: str) -> list[str]:
    return [fmt.rule for fmt in secrets.TOKENS if fmt.found_in(text)]


# (sample, the rule it is gitleaks' sample of, the finding's wording)
TRUE_POSITIVES = [
    # aws.go
    ("AWSToken = AKIALALEMEL33243OLIB", "aws-access-token", "an AWS access key ID"),
    ("aws_token: ASIAQ3MZ7XK2WN5PV4RT", "aws-access-token", "an AWS access key ID"),  # "ASIA"+NewSecret([A-Z2-7]{16})
    (
        "ABSKQmVkcm9ja0FQSUtleS1" + "EXAMPLE" * 15 + "EXM=",
        "aws-amazon-bedrock-api-key-long-lived",
        "an Amazon Bedrock API key",
    ),
    (
        'AmazonBedrockAPIKeyShortLivedToken = "bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t"',
        "aws-amazon-bedrock-api-key-short-lived",
        "an Amazon Bedrock API key",
    ),
    # privatekey.go
    (
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDAC4AWkdwKYSd8\n"
        "Ks14IReLcYgADhoXk56ZzXI=\n-----END PRIVATE KEY-----",
        "private-key",
        "a private key",
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQWGBGSVV4YBDAClvRnxezIRy2Yv7SFlzC0iFiRF/O/jePSw+XYhvcrTaqSYTGic\n"
        "=8xQN\n-----END PGP PRIVATE KEY BLOCK-----",
        "private-key",
        "a private key",
    ),
    # github.go (NewSecret(AlphaNumeric("36")) / ("82"))
    (f'githubToken = "ghp_{AN36}"', "github-pat", "a GitHub token"),
    (f"github_token: gho_{AN36}", "github-oauth", "a GitHub token"),
    (f"githubToken=ghs_{AN36}", "github-app-token", "a GitHub token"),
    (f"githubToken=ghu_{AN36}", "github-app-token", "a GitHub token"),
    (f"githubToken=ghr_{AN36}", "github-refresh-token", "a GitHub token"),
    (f"github_token: 'github_pat_{AN36 * 2}{AN36[:10]}'", "github-fine-grained-pat", "a GitHub token"),
    # gitlab.go
    (f"gitlabToken = glpat-{AN20}", "gitlab-pat", "a GitLab token"),
    (f'gitlab_api_token = "glrt-{AN20}"', "gitlab-runner-authentication-token", "a GitLab token"),
    (f'gitlab_api_token = "gldt-{AN20}"', "gitlab-deploy-token", "a GitLab token"),
    (f"gitlabToken = glptt-{HEX40}", "gitlab-ptt", "a GitLab token"),
    (f"gitlabToken = glcbt-7Kq2N_{AN20}", "gitlab-cicd-job-token", "a GitLab token"),
    # slack.go
    ('"bot_token1": "xoxb-781236542736-2364535789652-GkwFDQoHqzXDVsC6GzqYUypD"', "slack-bot-token", "a Slack token"),
    ('"bot_token2": "xoxb-282029623751-BVtmnS3BQitmjZvjpQL7PSGP"', "slack-legacy-bot-token", "a Slack token"),
    (
        '"user_token2": "xoxp-283316862324-298911817009-298923149681-44f585044dace54f5701618e97cd1c0b"',
        "slack-user-token",
        "a Slack token",
    ),
    ('"access_token1": "xoxs-3206092076-3204538285-3743137121-836b042620"', "slack-legacy-token", "a Slack token"),
    (
        '"access_token": "xoxa-2-511111111-31111111111-3111111111111-e039d02840a0b9379c"',
        "slack-legacy-workspace-token",
        "a Slack token",
    ),
    (
        '"token2": "xapp-1-IEMF8IMY1OQ-4037076220459-85c370b433e366de369c4ef5abdf41253519266982439a75af74a3d68d543fb6"',
        "slack-app-token",
        "a Slack token",
    ),
    (
        '"access_token1": "xoxe.xoxp-1-Mi0yLTM0MTQwNDE0MDE3Ni0zNjU5NDY0Njg4MTctNTE4MjA3NTQ5NjA4MC01NDEyOTYyODY5NzUxLThh'
        'MTBjZmI1ZWIzMGIwNTg0ZDdmMDI5Y2UxNzVlZWVhYzU2ZWQyZTZiODNjNDZiMGUxMzRlNmNjNDEwYmQxMjQ"',
        "slack-config-access-token",
        "a Slack token",
    ),
    (
        '"refresh_token1": "xoxe-1-My0xLTMxNzcwMjQ0MTcxMy01MTU4MTUyNjkxNzE0LTUxODE4NDI0MDY3MzYtMjA5MGFkOTFlZThkZWE2'
        'OGFlZDYwYWJjODNhYzAxYjA5ZjVmODBhYjgzN2QyNDdjOTNlOGY5NTg2YWM1OGM4Mg"',
        "slack-config-refresh-token",
        "a Slack token",
    ),
    (
        "https://hooks.slack.com/services/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",
        "slack-webhook-url",
        "a Slack webhook URL",
    ),
    # stripe.go
    (
        "sk_test_51OuEMLAlTWGaDypq4P5cuDHbuKeG4tAGPYHJpEXQ7zE8mKK3jkhTFPvCxnSSK5zB5EQZrJsYdsatNmAHGgb0vSKD00GTMSWRHs",
        "stripe-access-token",
        "a Stripe key",
    ),
    (
        "rk_prod_51OuEMLAlTWGaDypquDn9aZigaJOsa9NR1w1BxZXs9JlYsVVkv5XDu6aLmAxwt5Tgun5WcSwQMKzQyqV16c9iD4sx00BRijuoon",
        "stripe-access-token",
        "a Stripe key",
    ),
    # gcp.go
    ("AIzaSyNHxIf32IQ1a1yjl3ZJIqKZqzLAK1XhDk-", "gcp-api-key", "a Google API key"),
    # npm.go (NewSecret(AlphaNumeric("36")); the rule is case-insensitive)
    (f'npmAccessTokenToken = "npm_{AN36}"', "npm-access-token", "an npm token"),
    # pypi.go (Hex("32") twice)
    (f"pypiToken = pypi-AgEIcHlwaS5vcmc{HEX40}{HEX40[:24]}", "pypi-upload-token", "a PyPI token"),
    # huggingface.go
    (
        "huggingface-cli login --token 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",
        "huggingface-access-token",
        "a Hugging Face token",
    ),
    (
        "DEV=1 HF_TOKEN=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 poetry run python app.py",
        "huggingface-access-token",
        "a Hugging Face token",
    ),
    (
        "os.environ['HUGGINGFACEHUB_API_TOKEN'] = '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'",
        "huggingface-organization-api-token",
        "a Hugging Face token",
    ),
    # sendgrid.go (NewSecret(AlphaNumericExtended("66")))
    (
        'sengridAPITokenToken = "SG.' + "aB3-dE5_fG7.hJ9=kL0mN2pQ4rS6tU8vW1xY3zA5bC7dE9fG1hJ3kL5mN7pQ9rS1tU" + '"',
        "sendgrid-api-token",
        "a SendGrid API key",
    ),
    # openai.go
    (
        "sk-proj-SevzWEV_NmNnMndQ5gn6PjFcX_9ay5SEKse8AL0EuYAB0cIgFW7Equ3vCbUbYShvii6L3rBw3WT3BlbkFJdD9FqO9Z3BoBu9F"
        "-KFR6YJtvW6fUfqg2o2Lfel3diT3OCRmBB24hjcd_uLEjgr9tCqnnerVw8A",
        "openai-api-key",
        "an OpenAI API key",
    ),
    (
        "sk-admin-JWARXiHjpLXSh6W_0pFGb3sW7yr0cKheXXtWGMY0Q8kbBNqsxLskJy0LCOT3BlbkFJgTJWgjMvdi6YlPvdXRqmSlZ4dLK-nFxUG2"
        "d9Tgaz5Q6weGVNBaLuUmMV4A",
        "openai-api-key",
        "an OpenAI API key",
    ),
    # anthropic.go
    (
        "sk-ant-api03-abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde-1234fghijklmnopby56aaaogaopaaaabc123xyzAA",
        "anthropic-api-key",
        "an Anthropic API key",
    ),
    (
        "sk-ant-admin01-abc12fake-456def789ghij-klmnopqrstuvwx-3456yza789bcde-12fakehijklmnopby56aaaogaopaaaabc123xyzAA",
        "anthropic-admin-api-key",
        "an Anthropic API key",
    ),
    # databricks.go
    ("token = dapif13ac4b49d1cb31f69f678e39602e381-2", "databricks-api-token", "a Databricks token"),
    # pulumi.go (NewSecret(Hex("40")))
    (f'pulumi-api-tokenToken = "pul-{HEX40}"', "pulumi-api-token", "a Pulumi access token"),
]


@pytest.mark.parametrize(("sample", "rule", "what"), TRUE_POSITIVES, ids=[r for _, r, _ in TRUE_POSITIVES])
def test_gitleaks_true_positives(sample, rule, what):
    assert rule in rules_matching(sample)
    assert [f.what for f in secrets.tokens(sample)] == [what]


# (sample, why it is not a token): gitleaks' fps, and ours where ours differs.
FALSE_POSITIVES = [
    ("key = AKIAXXXXXXXXXXXXXXXX", "aws.go: low entropy"),
    ("aws_access_key: AKIAIOSFODNN7EXAMPLE", "aws.go: the IAM user guide's placeholder (allowlist .+EXAMPLE$)"),
    ('msgstr "Näytä asiakirjamallikansio."', "aws.go: lowercase"),
    ("TODAYINASIAASACKOFRICEFELLOVER", "aws.go: wrong length"),
    ("AKIAQX7KD2NMP9RT4VW1", "ours: 0, 1, 8 and 9 are outside the key ID's base32 alphabet"),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "ours: the IAM user guide's placeholder"),
    ("ABSKQmVkcm9ja0FQSUtleS1EXAMPLE", "aws.go: too short"),
    ("AXSKQmVkcm9ja0FQSUtleS1" + "EXAMPLE" * 15 + "EXM=", "aws.go: wrong prefix"),
    ("bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29x", "aws.go: wrong prefix"),
    ("-----BEGIN PRIVATE KEY-----\nanything\n-----END PRIVATE KEY-----", "privatekey.go: no key body"),
    ("-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----", "privatekey.go: empty"),
    ('grep -q -- "-----BEGIN RSA PRIVATE KEY-----" /etc/key.pem', "ours: a header alone is not a key"),
    ("ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "github.go: placeholder (entropy)"),
    ("github_pat_xxxxxxxxxxxxxxxxxxxxxx_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "github.go"),
    ("glpat-XXXXXXXXXXX-XXXXXXXX", "gitlab.go: placeholder (entropy)"),
    ("glptt-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "gitlab.go: placeholder"),
    ("xoxb-xxxxxxxxx-xxxxxxxxxx-xxxxxxxxxxxx", "slack.go"),
    ("xoxb-xxx", "slack.go"),
    ("xoxb-12345-abcd234", "slack.go"),
    ("xoxb-xoxb-my-bot-token", "slack.go (the pattern before gitleaks' read this as a token)"),
    ('"token1": "xoxp-1234567890"', "slack.go"),
    ('"token2": "xoxp-XXXXXXXXXX-XXXXXXXXXX-XXXXXXXXXXX-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX"', "slack.go"),
    ('"token3": "xoxp-1234-1234-1234-4ddbc191d40ee098cbaae6f3523ada2d"', "slack.go"),
    ('"token4": "xoxp-572370529330-573807301142-572331691188-####################"', "slack.go"),
    (f'nonMatchingToken := "task_test_{AN36[:30]}"', "stripe.go"),
    (
        "GWw4hjABFzZCGiRpmlDyDdo87Jn9BN9THUA47muVRNunLxsa82tMAdvmrhOqNkRKiYMEAFbTJAIzaTesb6Tscfcni8vIpWZqNCXFDFslJtVSvFDq",
        "gcp.go: text boundary start",
    ),
    ("AIzaTesb6Tscfcni8vIpWZqNCXFDFslJtVSvFDqabcd123", "gcp.go: text boundary end"),
    ('apiKey: "AIzaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"', "gcp.go: not enough entropy"),
    ("AIZASYCO2CXRMC9ELSKLHLHRMBSWDEVEDZTLO2O", "gcp.go: incorrect case"),
    ("- (id)hf_requiredCharacteristicTypesForDisplayMetadata;", "huggingface.go (ours before read it as a token)"),
    ('os.environ.get("HF_AUTH_TOKEN", "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),', "huggingface.go: placeholder"),
    ("HUGGINGFACE_API_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx,", "huggingface.go: too long"),
    ("const api_org_controller = require('../../controllers/api/index').organizations;", "huggingface.go"),
    (
        "sk-ant-api03-abc123xyz-456de-klMnopqrstuvwx-3456yza789bcde-1234fghijklmnopAA",
        "anthropic.go: too short",
    ),
    (
        "sk-ant-api03-abc123xyz-456def789ghij-klmnopqrstuvwx-3456yza789bcde-1234fghijklmnopby56aaaogaopaaaabc123xyzBB",
        "anthropic.go: wrong suffix",
    ),
    ("DATABRICKS_TOKEN=dapi123456789012345678a9bc01234defg5", "databricks.go"),
    (
        '<img src="./assets/vipul-f0eb1acf0da84c06a50c5b2c59932001997786b176dec02bd16128ee9ea83628.png" alt="">',
        "pulumi.go",
    ),
]


@pytest.mark.parametrize(("sample", "why"), FALSE_POSITIVES, ids=[w for _, w in FALSE_POSITIVES])
def test_gitleaks_false_positives(sample, why):
    assert rules_matching(sample) == []
    assert secrets.tokens(sample) == []


def test_every_format_has_a_sample_and_a_gitleaks_rule_or_a_reason():
    sampled = {rule for _, rule, _ in TRUE_POSITIVES}
    rules = [fmt.rule for fmt in secrets.TOKENS]
    assert set(rules) - {""} == sampled
    # The one format gitleaks has no rule for (its generic-api-key rule is keyword-driven):
    assert [fmt.what for fmt in secrets.TOKENS if not fmt.rule] == ["an AWS secret access key"]
    assert secrets.GITLEAKS == "gitleaks v8.30.1 (commit 83d9cd684c87d95d656c1458ef04895a7f1cbd8e)"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (f"T=npm_{AN36}", True),
        (f"T=npm_{AN36}\n", True),
        (f"T=npm_{AN36};", True),
        (f'{{"config.ini": "NPM_TOKEN=npm_{AN36}\\nBACKUP_ENABLED=true"}}', True),  # an escaped \n ends it
        (f"T=npm_{AN36}x", False),  # a longer run is not this token
        (f"T=npm_{AN36}-", False),
        (f"T=xnpm_{AN36}", False),  # gitleaks' \b before the token
    ],
)
def test_unique_tokens_end_where_gitleaks_ends_them(text, found):
    assert bool(rules_matching(text)) is found


def test_entropy_floor_is_exclusive_and_measured_on_the_secret():
    # gitleaks drops a match whose secret has entropy <= the rule's floor (detect/detect.go: `entropy <= r.Entropy`).
    fmt = secrets.TokenFormat("t", "r", secrets.re.compile(r"k=(\w+)"), 2.0)
    assert secrets.entropy("abab") == 1.0
    assert secrets.entropy("abcd") == 2.0
    assert not fmt.found_in("k=abcd")  # exactly the floor: dropped
    assert fmt.found_in("k=abcde")
    # The secret is the capture group, not the whole match: "k=" would lift "aaab" over 1 bit.
    assert not secrets.TokenFormat("t", "r", secrets.re.compile(r"k=(\w+)"), 1.0).found_in("k=aaab")
    # A later match still counts when an earlier one is a placeholder.
    assert fmt.found_in("k=aaaa k=abcde")
    allow = secrets.TokenFormat("t", "r", secrets.re.compile(r"k=(\w+)"), 0.0, secrets.re.compile("EXAMPLE$"))
    assert not allow.found_in("k=abcEXAMPLE")
    assert allow.found_in("k=abcEXAMPLE k=abc")


def test_a_private_key_with_its_body_is_found_in_user_data_layers():
    key = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{OPENSSH_BODY}-----END OPENSSH PRIVATE KEY-----\n"
    script = f"#!/bin/bash\ncat > /root/.ssh/id_ed25519 <<'EOF'\n{key}EOF\n"
    assert [(f.what, f.layer) for f in secrets.tokens(script)] == [("a private key", "as written")]


@pytest.mark.parametrize("name", ["WANDB_API_KEY", "NGC_API_KEY", "DOCKERHUB_TOKEN"])
def test_vendors_without_a_gitleaks_rule_are_high_entropy_warnings(name):
    # No gitleaks v8.30.1 rule gives these formats: a key assigned to the vendor's variable is a warning only.
    [finding] = secrets.scan(f"export {name}=9f3c1a7e5b2d8046c1e9a3f7b5d2c8e0a4f6b1d3")
    assert (finding.what, finding.token) == (f"a high-entropy value assigned to {name}", False)


def test_routable_gitlab_tokens_are_found_by_the_base_rules():
    # gitlab.go's shapes: glpat-<27>.<2><7> and glrt-t<digit>_<27>.<2><7>.
    assert rules_matching(f"T=glpat-{AN20}Ab3dE5f.01x7kq2nm") == ["gitlab-pat"]
    assert rules_matching(f"T=glrt-t1_{AN20}Ab3dE5f.01x7kq2nm") == ["gitlab-runner-authentication-token"]
