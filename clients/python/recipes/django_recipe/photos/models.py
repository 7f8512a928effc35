from django.db import models


class Photo(models.Model):
    # BigAutoField: Django leaves id out of the INSERT and reads it back with
    # RETURNING; the DEFAULT set by migration 0001's RunSQL makes it.
    id = models.BigAutoField(primary_key=True)
    caption = models.TextField()

    class Meta:
        db_table = "photos"

    def as_json(self):
        return {"id": str(self.id), "caption": self.caption}  # a string: JSON numbers lose digits


class TrapPhoto(models.Model):
    """The loaddata trap: its generator is the column's own serial sequence."""

    id = models.BigAutoField(primary_key=True)
    caption = models.TextField()

    class Meta:
        db_table = "trap_photos"


class Album(models.Model):
    """A sharded table (migrations 0005 and 0006): the template, public.albums."""

    id = models.BigIntegerField(primary_key=True)
    title = models.TextField()
    mood = models.TextField(default="ok")

    class Meta:
        db_table = "albums"
