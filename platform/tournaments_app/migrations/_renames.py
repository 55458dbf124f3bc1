"""What a model rename of this app must carry besides its rows: the permissions named after the
model (``view_pairing`` -> ``view_table``), so the groups and users that hold them keep them.

Django's RenameModel renames the table and the content type, not the permissions' codenames; the
post_migrate signal would then create ``view_table`` beside the old row and nobody would hold it.
Not a migration (the loader skips names that start with ``_``): the migrations import it.
"""

from __future__ import annotations

ACTIONS = ("add", "change", "delete", "view")


def rename_permissions(apps, renames: dict[str, str], *, label: str = "tournaments") -> None:
    """``renames``: old model name -> new one, lower case. A permission already made under the new
    codename (a post_migrate that ran in between) takes over the old one's holders."""
    Permission = apps.get_model("auth", "Permission")
    for old, new in renames.items():
        for action in ACTIONS:
            found = Permission.objects.filter(content_type__app_label=label, codename=f"{action}_{old}").first()
            if found is None:
                continue
            twin = Permission.objects.filter(content_type=found.content_type, codename=f"{action}_{new}").first()
            if twin is None:
                found.codename = f"{action}_{new}"
                found.name = f"Can {action} {new_verbose(new)}"
                found.save(update_fields=["codename", "name"])
                continue
            for group in found.group_set.all():
                group.permissions.add(twin)
            for user in found.user_set.all():
                user.user_permissions.add(twin)
            found.delete()


def new_verbose(name: str) -> str:
    """The default verbose name Django gives the renamed models (``tableseat`` -> ``table seat``)."""
    return {"tableseat": "table seat", "tournamentround": "tournament round"}.get(name, name)


def forwards(renames: dict[str, str]):
    """A RunPython function for ``renames``; its reverse is ``forwards`` of the inverted mapping."""

    def run(apps, schema_editor) -> None:
        rename_permissions(apps, renames)

    return run
