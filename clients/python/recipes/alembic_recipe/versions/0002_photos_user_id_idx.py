"""photos_user_id_idx: an index built CONCURRENTLY on every shard's copy

apply_ddl() builds it one table at a time, each in its own transaction,
over a loopback dblink connection (CREATE EXTENSION dblink in the
database); the index must be named, so that a retried build is not made a
second time under another name. Outside Alembic's transaction, as 0001.

Revision ID: 0002
Revises: 0001
"""
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade():
    with op.get_context().autocommit_block():
        op.execute("CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_user_id_idx ON %s (user_id)')")


def downgrade():
    with op.get_context().autocommit_block():
        op.execute("CALL shardid.apply_ddl('public.photos', 'DROP INDEX CONCURRENTLY %s_user_id_idx')")
