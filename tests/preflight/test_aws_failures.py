"""`prices refresh` and `preflight` when AWS stays unavailable: lasting throttling, 503s, dropped connections and
read timeouts end, after botocore's retries (standard mode, bounded timeouts), in one message and exit 6, never
an internal error after minutes; malformed Price List data is AWS's answer, never blamed on a flag. Also the
default client configuration, and `preflight --stack dev` against a plain moto server (API errors are warnings).

The fault server listens on 127.0.0.1 only and answers every request the way its mode says, except STS
GetCallerIdentity (so that preflight gets past its credentials check to the EC2 and Service Quotas calls)."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpucloud import aws as aws_mod
from gpucloud.cli import main

ROOT = Path(__file__).resolve().parents[2]
IDENTITY = (
    '<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>'
    "<Arn>arn:aws:iam::123456789012:user/t</Arn><UserId>AIDA</UserId><Account>123456789012</Account>"
    "</GetCallerIdentityResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata>"
    "</GetCallerIdentityResponse>"
)


class FaultServer:
    def __init__(self) -> None:
        self.mode = "throttle"
        self.requests: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                target = self.headers.get("X-Amz-Target") or ""
                if "Action=GetCallerIdentity" in body:
                    return self._send(200, IDENTITY, "text/xml")
                server.requests.append(target or body.split("&", 1)[0])
                mode = server.mode
                if mode == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return None
                if mode == "hang":
                    time.sleep(1.5)
                    return self._send(200, "{}", "application/x-amz-json-1.1")
                if mode == "503":
                    return self._send(503, "Service Unavailable", "text/plain")
                if mode == "garbage":  # a Price List answer whose documents are not JSON
                    doc = {"FormatVersion": "aws_v1", "PriceList": ["{not json"]}
                    return self._send(200, json.dumps(doc), "application/x-amz-json-1.1")
                if target:  # JSON protocol (Price List, Service Quotas)
                    doc = {"__type": "ThrottlingException", "message": "Rate exceeded"}
                    return self._send(400, json.dumps(doc), "application/x-amz-json-1.1")
                xml = (
                    "<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit exceeded."
                    "</Message></Error></Errors><RequestID>r</RequestID></Response>"
                )
                return self._send(503, xml, "text/xml")

            def _send(self, status: int, text: str, kind: str) -> None:
                data = text.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FaultServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def faults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FaultServer]:
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_RETRY_MODE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")
    monkeypatch.setenv("GPUCLOUD_AWS_READ_TIMEOUT", "0.5")
    monkeypatch.setenv("GPUCLOUD_PRICE_CACHE", str(tmp_path / "prices.json"))
    with FaultServer() as server:
        monkeypatch.setenv("AWS_ENDPOINT_URL", server.url)
        yield server


REFRESH = ["prices", "refresh", "--types", "p5.48xlarge", "--no-services", "--format", "json"]


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        (
            "throttle",
            "gpucloud: error: price refresh (Price List API): AWS kept throttled GetProducts for 2 attempts "
            "(ThrottlingException: Rate exceeded); run again later",
        ),
        (
            "503",
            "gpucloud: error: price refresh (Price List API): AWS kept failing GetProducts for 2 attempts (503: ",
        ),
        ("drop", "gpucloud: error: price refresh (Price List API): cannot reach AWS after 2 attempts"),
        (
            "hang",
            "gpucloud: error: price refresh (Price List API): cannot reach AWS after 2 attempts (ReadTimeoutError",
        ),
    ],
)
def test_refresh_under_lasting_failure_is_exit_6_after_bounded_retries(
    faults: FaultServer, capsys: pytest.CaptureFixture[str], mode: str, message: str
) -> None:
    faults.mode = mode
    started = time.monotonic()
    code = main(REFRESH)
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    assert (code, out) == (6, "")
    assert err.startswith(message), err
    assert err.count("\n") == 1 and "Traceback" not in err
    # Both attempts reached the server, and the whole command stayed within the bounded timeouts.
    assert len(faults.requests) == 2
    assert elapsed < 15


def test_malformed_price_list_is_aws_data_not_spot_days(
    faults: FaultServer, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    faults.mode = "garbage"
    code = main(REFRESH)
    _, err = capsys.readouterr()
    assert code == 6
    assert err.startswith(
        "gpucloud: error: price refresh (Price List API): AWS answered with data gpucloud cannot read "
        "(JSONDecodeError: Expecting property name enclosed in double quotes"
    )
    assert "--spot-days" not in err
    assert "this region's prices were not written to the price cache" in err
    assert not (tmp_path / "prices.json").exists()


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("throttle", "gpucloud: error: preflight quota: AWS kept throttled ListServiceQuotas for 2 attempts"),
        ("drop", "gpucloud: error: preflight quota: cannot reach AWS after 2 attempts"),
        ("503", "gpucloud: error: preflight quota: AWS kept failing ListServiceQuotas for 2 attempts (503: "),
    ],
)
def test_preflight_under_lasting_failure_is_exit_6(
    faults: FaultServer, capsys: pytest.CaptureFixture[str], mode: str, message: str
) -> None:
    faults.mode = mode
    code = main(["preflight", "--stack", "dev", "--program", str(ROOT)])
    out, err = capsys.readouterr()
    assert (code, out) == (6, "")
    assert err.startswith(message), err
    assert "Traceback" not in err


def test_preflight_against_a_plain_moto_server_warns_on_what_it_lacks(
    aws_env: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # moto answers ListServiceQuotas and GetSpotPlacementScores with an HTML 500 page: not checked, a warning.
    code = main(["preflight", "--stack", "dev", "--program", str(ROOT), "--format", "json"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    by_check = {c["check"]: c for c in report["checks"]}
    assert by_check["quota"]["status"] == "warn"
    assert by_check["quota"]["message"] == (
        "not checked: ListServiceQuotas failed (500: HTTP 500 with an HTML page, not an AWS error answer)"
    )
    assert by_check["spot-score"]["status"] == "warn"
    assert by_check["spot-score"]["message"].startswith(
        "not checked: preflight spot-score: the endpoint answered with something that is not an AWS response"
    )
    # moto has no public SSM AMI parameters: a failed check (exit 3), not an internal error.
    assert by_check["ami"]["status"] == "fail"
    assert code == 3
    assert err == ""


def test_clients_get_bounded_timeouts_and_the_standard_retry_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AWS_RETRY_MODE", "AWS_MAX_ATTEMPTS", "GPUCLOUD_AWS_READ_TIMEOUT", "GPUCLOUD_AWS_CONNECT_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    client = aws_mod.default_clients("ec2", "us-east-1")
    config = client.meta.config
    assert (config.connect_timeout, config.read_timeout) == (5.0, 15.0)
    assert config.retries == {"mode": "standard", "total_max_attempts": 3}
    monkeypatch.setenv("AWS_RETRY_MODE", "adaptive")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "6")
    assert aws_mod.default_clients("ec2", "us-east-1").meta.config.retries == {
        "mode": "adaptive",
        "total_max_attempts": 6,
    }


@pytest.mark.parametrize(
    ("var", "value", "message"),
    [
        ("AWS_RETRY_MODE", "eager", "AWS_RETRY_MODE='eager' is not a botocore retry mode; use one of standard"),
        ("AWS_MAX_ATTEMPTS", "0", "AWS_MAX_ATTEMPTS='0' must be a whole number of at least 1, e.g. 3"),
        ("GPUCLOUD_AWS_READ_TIMEOUT", "soon", "GPUCLOUD_AWS_READ_TIMEOUT='soon' must be a number of seconds"),
    ],
)
def test_bad_retry_settings_are_exit_2(
    faults: FaultServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], var: str, value: str,
    message: str,
) -> None:  # fmt: skip
    monkeypatch.setenv(var, value)
    code = main(REFRESH)
    _, err = capsys.readouterr()
    assert code == 2
    assert err.startswith(f"gpucloud: error: {message}"), err
    assert faults.requests == []
