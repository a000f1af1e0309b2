resource "aws_cloudwatch_event_bus_policy" "ml_events_policy" {
  event_bus_name = "ml-events"
  policy = jsonencode({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "events:PutEvents", "Resource": "arn:aws:events:us-east-1:123456789012:event-bus/ml-events", "Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-a1b2c3d4e5"}}}]})
}
