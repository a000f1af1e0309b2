"""The reservation-event relay's Lambda code, run against fake EC2/SQS calls (no network)."""

from __future__ import annotations

import json
from typing import Any

from gpucloud.components.reservation_relay import affected_instances, nth_message, relay

CB_EXPIRY = {
    "id": "e-1",
    "detail-type": "Capacity Block Expiration Warning",
    "source": "aws.ec2",
    "account": "123456789012",
    "time": "2026-11-30T11:20:00Z",
    "region": "us-east-1",
    "resources": ["arn:aws:ec2:us-east-1:123456789012:capacity-reservation/cr-0a1b2c3d4e5f60789"],
    "detail": {"capacity-reservation-id": "cr-0a1b2c3d4e5f60789", "end-date": "2026-11-30T12:00:00Z"},
}
CR_INTERRUPTION = {
    "id": "e-2",
    "detail-type": "EC2 Capacity Reservation Instance Interruption Warning",
    "source": "aws.ec2",
    "account": "123456789012",
    "time": "2026-11-30T11:20:00Z",
    "region": "us-east-1",
    "resources": ["arn:aws:ec2:us-east-1:123456789012:instance/i-0aaaaaaaaaaaaaaaa"],
    "detail": {
        "instance-id": "i-0aaaaaaaaaaaaaaaa",
        "instance-action": "terminate",
        "instance-termination-time": "2026-11-30T11:22:00Z",
        "azId": "use1-az1",
    },
}


class FakeEc2:
    def __init__(self, pages: list[dict[str, Any]]) -> None:
        self.pages = pages
        self.calls: list[dict[str, Any]] = []

    def describe_instances(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        return self.pages[len(self.calls) - 1]


def test_capacity_block_expiry_lists_the_block_instances_across_pages() -> None:
    ec2 = FakeEc2(
        [
            {"Reservations": [{"Instances": [{"InstanceId": "i-1"}, {"InstanceId": "i-2"}]}], "NextToken": "t"},
            {"Reservations": [{"Instances": [{"InstanceId": "i-3"}]}]},
        ]
    )
    assert affected_instances(CB_EXPIRY, ec2.describe_instances) == ["i-1", "i-2", "i-3"]
    assert ec2.calls[0]["Filters"] == [
        {"Name": "capacity-reservation-id", "Values": ["cr-0a1b2c3d4e5f60789"]},
        {"Name": "instance-state-name", "Values": ["pending", "running"]},
    ]
    assert ec2.calls[1]["NextToken"] == "t"


def test_reservation_interruption_is_one_instance_without_a_lookup() -> None:
    ec2 = FakeEc2([])
    assert affected_instances(CR_INTERRUPTION, ec2.describe_instances) == ["i-0aaaaaaaaaaaaaaaa"]
    assert ec2.calls == []


def test_other_events_relay_nothing() -> None:
    assert affected_instances({"detail-type": "EC2 Spot Instance Interruption Warning", "detail": {}}, None) == []


def test_message_has_the_shape_nth_acts_on() -> None:
    # aws-node-termination-handler v1.25.0 pkg/monitor/sqsevent/spot-itn-event.go reads detail.instance-id;
    # sqs-monitor.go dispatches on source aws.ec2 + detail-type "EC2 Spot Instance Interruption Warning".
    assert nth_message(CR_INTERRUPTION, "i-0aaaaaaaaaaaaaaaa") == {
        "version": "0",
        "id": "gpucloud-relay-e-2-i-0aaaaaaaaaaaaaaaa",
        "detail-type": "EC2 Spot Instance Interruption Warning",
        "source": "aws.ec2",
        "account": "123456789012",
        "time": "2026-11-30T11:20:00Z",
        "region": "us-east-1",
        "resources": ["arn:aws:ec2:us-east-1:123456789012:instance/i-0aaaaaaaaaaaaaaaa"],
        "detail": {"instance-id": "i-0aaaaaaaaaaaaaaaa", "instance-action": "terminate"},
    }


def test_relay_sends_one_message_per_instance_to_the_nth_queue() -> None:
    sent: list[dict[str, Any]] = []
    ec2 = FakeEc2([{"Reservations": [{"Instances": [{"InstanceId": "i-1"}, {"InstanceId": "i-2"}]}]}])
    url = "https://sqs.us-east-1.amazonaws.com/123456789012/nth"
    assert relay(CB_EXPIRY, ec2.describe_instances, lambda **kw: sent.append(kw), url) == ["i-1", "i-2"]
    assert [m["QueueUrl"] for m in sent] == [url, url]
    assert [json.loads(m["MessageBody"])["detail"]["instance-id"] for m in sent] == ["i-1", "i-2"]
