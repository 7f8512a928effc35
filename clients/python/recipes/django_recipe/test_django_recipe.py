"""The Django recipe of docs/applications.md, tested on a database with
shardid (test/tap/orm_recipes.pl): migrations 0001 (BigAutoField + RunSQL
DEFAULT on a generator sequence of its own) to 0004, with the traps they
show: a BigIntegerField primary key sends NULL, AlterField back to
BigAutoField replaces the shardid DEFAULT, loaddata resets a generator that
is the column's own sequence, serializers write IDs as JSON numbers; and
0005 to 0007: a sharded table changed by apply_ddl() (atomic = False).

    PGHOST=... PGPORT=... PGUSER=... PGDATABASE=... python3 -m pytest test_django_recipe.py
"""
import io
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..")]

import django  # noqa: E402
from django.conf import settings  # noqa: E402

settings.configure(
    DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": os.environ["PGDATABASE"],
                           "HOST": os.environ["PGHOST"], "PORT": os.environ["PGPORT"], "USER": os.environ["PGUSER"]}},
    INSTALLED_APPS=["photos"], USE_TZ=True)
django.setup()

from django.core import serializers  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import IntegrityError, DatabaseError, connection, transaction  # noqa: E402
from django.db.migrations.executor import MigrationExecutor  # noqa: E402

from shardid_ids import decode, to_shortcode  # noqa: E402


def migrate(target):
    call_command("migrate", "photos", target, verbosity=0)
    loader = MigrationExecutor(connection).loader
    name = loader.get_migration_by_prefix("photos", target).name
    return loader.project_state(("photos", name)).apps.get_model("photos", "Photo")


def sql(query, *args):
    with connection.cursor() as c:
        c.execute(query, args)
        return c.fetchall()


def id_default():
    return sql("SELECT coalesce(pg_get_expr(d.adbin, d.adrelid), CASE WHEN a.attidentity <> '' THEN 'identity' END, '') "
               "FROM pg_attribute a "
               "LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
               "WHERE a.attrelid = 'public.photos'::regclass AND a.attname = 'id'")[0][0]


class DjangoRecipe(unittest.TestCase):
    def test_recipe_and_traps(self):
        print(f"django {django.get_version()}")
        Photo = migrate("0001")
        self.assertEqual(id_default(), "shardid.next_id(5, 'photos_gen'::regclass)")
        p = Photo.objects.create(caption="django")
        self.assertEqual(str(p.id), sql("SELECT id::text FROM photos WHERE caption = 'django'")[0][0])
        self.assertEqual(decode(p.id)[1], 5)
        self.assertEqual(Photo.objects.get(id=p.id).caption, "django")
        bulk = Photo.objects.bulk_create([Photo(caption="bulk 1"), Photo(caption="bulk 2")])
        self.assertEqual([b.id for b in bulk], [r[0] for r in sql(
            "SELECT id FROM photos WHERE caption IN ('bulk 1', 'bulk 2') ORDER BY caption")])
        self.assertEqual({decode(b.id)[1] for b in bulk}, {5})

        # IDs as strings: Django's serializers write JSON numbers, which JavaScript rounds
        from photos.models import Photo as Final
        readme_id = 4035735874804122625  # the README's ID: 2^53 < ID, not a multiple of 1024
        number = json.loads(serializers.serialize("json", [Final(id=readme_id, caption="x")]))[0]["pk"]
        self.assertIsInstance(number, int)  # a JSON number: JSON.parse gives 4035735874804122600
        self.assertNotEqual(int(float(number)), readme_id)
        self.assertEqual(json.loads(json.dumps(Final.objects.get(id=p.id).as_json()))["id"], str(p.id))

        # loaddata: the recipe's generator is untouched by the sequence reset
        fixture = [{"model": "photos.photo", "pk": p.id - 1000, "fields": {"caption": "from a fixture"}}]
        trap_fixture = [{"model": "photos.trapphoto", "pk": p.id - 1000, "fields": {"caption": "from a fixture"}}]
        path = os.path.join(HERE, "photos", "fixtures")
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "photos.json"), "w") as f:
            json.dump(fixture + trap_fixture, f)
        call_command("loaddata", "photos", verbosity=0)
        after = Photo.objects.create(caption="after loaddata")
        self.assertGreater(after.id, p.id)
        self.assertEqual(decode(after.id)[1], 5)
        # the trap: a generator that is the column's own sequence was set to max(id) by loaddata
        from photos.models import TrapPhoto
        with self.assertRaises(DatabaseError) as cm, transaction.atomic():
            TrapPhoto.objects.create(caption="after loaddata")
        print(f"trap loaddata: {cm.exception}".splitlines()[0])
        self.assertRegex(str(cm.exception), "generator|out of|range|layout")

        # AlterField to BigIntegerField(primary_key=True): inserts send id NULL
        Photo = migrate("0002")
        with self.assertRaisesRegex(IntegrityError, 'null value in column "id"'), transaction.atomic():
            Photo.objects.create(caption="null id")

        # AlterField back to BigAutoField: Django's own sequence replaces the shardid DEFAULT
        Photo = migrate("0003")
        self.assertNotIn("shardid", id_default())
        before = sql("SELECT max(id) FROM photos")[0][0]
        q = Photo.objects.create(caption="django's own numbers")
        print(f"trap AlterField: default {id_default()!r}, next ID {q.id}")
        if django.VERSION >= (4, 1):
            self.assertEqual(q.id, 1)           # an identity column, from 1
        else:
            self.assertEqual(q.id, before + 1)  # a serial set to max(id): the next shardid-looking ID, taken

        # the recipe after any AlterField of the ID: the DEFAULT again
        Photo = migrate("0004")
        self.assertEqual(id_default(), "shardid.next_id(5, 'photos_gen'::regclass)")
        r = Photo.objects.create(caption="shardid again")
        self.assertEqual(decode(r.id)[1], 5)
        self.assertGreater(r.id, after.id)
        print(f"recipe: {r.id} /p/{to_shortcode(r.id)}")

        # a sharded table changed by apply_ddl() in a migration (atomic = False)
        migrate("0005")
        columns = ("SELECT count(*) FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                   "WHERE c.relname = 'albums' AND c.relkind = 'r' AND a.attname = 'mood' AND NOT a.attisdropped")
        indexes = "SELECT count(*) FROM pg_class WHERE relname = 'albums_mood_idx'"
        self.assertEqual(sql("SELECT count(*) FROM pg_class WHERE relname = 'albums' AND relkind = 'r'")[0][0], 5)
        migrate("0007")
        from photos.models import Album
        self.assertEqual((sql(columns)[0][0], sql(indexes)[0][0]), (5, 5))  # the template and 4 shards
        self.assertEqual(sql("SELECT count(*) FROM shardid.ddl_changes WHERE finished_at IS NOT NULL")[0][0], 2)
        Album.objects.create(id=1, title="holidays")
        self.assertEqual(Album.objects.get(id=1).mood, "ok")
        sql("INSERT INTO shard_0002.albums (title) VALUES ('in a shard') RETURNING id")
        self.assertEqual(sql("SELECT mood FROM shard_0002.albums")[0][0], "ok")
        migrate("0005")  # reverse: 0007 then 0006, each on every table
        self.assertEqual((sql(columns)[0][0], sql(indexes)[0][0]), (0, 0))
        print("recipe apply_ddl: migrations 0006 and 0007 forward and back over the template and 4 shards")

        # run again (migrate --fake back, then migrate): apply_ddl() knows its
        # finished changes, runs nothing twice and leaves nothing unfinished
        migrate("0007")
        call_command("migrate", "photos", "0005", fake=True, verbosity=0)
        migrate("0007")
        self.assertEqual((sql(columns)[0][0], sql(indexes)[0][0]), (5, 5))
        self.assertEqual(sql("SELECT count(*) FROM shardid.ddl_changes WHERE finished_at IS NULL")[0][0], 0)
        migrate("0005")
        print("recipe apply_ddl: 0006 and 0007 run a second time after migrate --fake: nothing twice, nothing unfinished")


if __name__ == "__main__":
    unittest.main(verbosity=2)
