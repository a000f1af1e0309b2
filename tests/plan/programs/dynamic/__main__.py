"""A dynamic resource (pulumi.dynamic.Resource) fed by another resource's outputs and by a Resource object."""

import pulumi
import pulumi_aws as aws
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class SchemaProvider(ResourceProvider):
    def create(self, props):  # type: ignore[no-untyped-def]
        return CreateResult("schema-1", outs=props)


class Schema(Resource):
    server_address: pulumi.Output[str]
    database_name: pulumi.Output[str]

    def __init__(self, name, args, opts=None):  # type: ignore[no-untyped-def]
        super().__init__(SchemaProvider(), name, args, opts)


db = aws.rds.Instance(
    "mysql-server",
    engine="mysql",
    instance_class="db.t3.micro",
    allocated_storage=20,
    username="admin",
    password="offline-example",
    skip_final_snapshot=True,
)
schema = Schema(
    "votes-table",
    {"server_address": db.address, "database_name": "votes", "instance": db, "creation_script": "CREATE TABLE t"},
)
pulumi.export("schemaId", schema.id)
pulumi.export("database", schema.database_name)
