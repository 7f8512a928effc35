from django.db import migrations

# An index on every shard's copy, built CONCURRENTLY one table at a time
# over a loopback dblink connection (CREATE EXTENSION dblink in the
# database). Django's state has no index here: it is the tables' own.


class Migration(migrations.Migration):
    atomic = False
    dependencies = [("photos", "0006_albums_mood")]
    operations = [
        migrations.RunSQL(
            "CALL shardid.apply_ddl('public.albums', 'CREATE INDEX CONCURRENTLY albums_mood_idx ON %s (mood)')",
            reverse_sql="CALL shardid.apply_ddl('public.albums', 'DROP INDEX CONCURRENTLY %s_mood_idx')",
        ),
    ]
