"""Users and groups in the admin: superusers only.

Django's own admins go by model permissions, so a staff user given ``auth.change_user`` could
edit any account (and make it a superuser). Here only superusers see or change users and
groups, whatever permissions an organizer holds.
"""

from core.admin import SuperuserOnlyAdmin
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group

User = get_user_model()

admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class SuperuserUserAdmin(SuperuserOnlyAdmin, UserAdmin):
    pass


@admin.register(Group)
class SuperuserGroupAdmin(SuperuserOnlyAdmin, GroupAdmin):
    pass
