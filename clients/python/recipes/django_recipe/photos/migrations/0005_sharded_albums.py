from django.db import migrations, models

# A sharded table: its template (public.albums, which Django knows as the
# model's table) and its copy in every shard. Not atomic: the *_proc
# procedures commit per batch, which they cannot do in a transaction block.


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("photos", "0004_shardid_default_again")]
    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL("CREATE TABLE public.albums (id bigint PRIMARY KEY, title text NOT NULL)",
                                  reverse_sql="DROP TABLE public.albums"),
                migrations.RunSQL("CALL shardid.create_shards_proc(0, 3)", reverse_sql=migrations.RunSQL.noop),
                migrations.RunSQL("CALL shardid.create_table_proc('public.albums')",
                                  reverse_sql=migrations.RunSQL.noop),
            ],
            state_operations=[
                migrations.CreateModel(
                    name="Album",
                    fields=[("id", models.BigIntegerField(primary_key=True, serialize=False)),
                            ("title", models.TextField())],
                    options={"db_table": "albums"},
                ),
            ],
        ),
    ]
