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
