from django.db import migrations, models

# The recipe for changing a sharded table: apply_ddl() on the template and
# every shard's copy (%s = each table), outside a transaction block
# (atomic = False: it commits per batch). One apply_ddl() per migration:
# migrate runs an interrupted migration again whole, and apply_ddl()
# finishes its unfinished change, but would run a finished one again.
# Django's state learns the field from state_operations; AddField would
# change the template alone.


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("photos", "0005_sharded_albums")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "CALL shardid.apply_ddl('public.albums', 'ALTER TABLE %s ADD COLUMN mood text NOT NULL DEFAULT ''ok''')",
                    reverse_sql="CALL shardid.apply_ddl('public.albums', 'ALTER TABLE %s DROP COLUMN mood')",
                ),
            ],
            state_operations=[migrations.AddField("album", "mood", models.TextField(default="ok"))],
        ),
    ]
